/**
 * The node trust rule (#43) against real servers: a SoftEther node (OpenVPN, SE-VPN and SSTP on one
 * certificate, as VPN Gate's) given certificates from the rig's "public" root, installed as this
 * process's extra roots as ISRG Root X1 is for real, with that root as its profile's <ca>, as VPN
 * Gate's profiles carry theirs. A certificate from it for another name is refused on every
 * protocol; for the node's DDNS name or *.opengw.net it passes; a node whose profile holds its own
 * private CA still works chain-only; /status and the log say which rule accepted each tunnel.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';
import { openTunnel, type LinkSpec, type Tunnel, type TunnelProtocol } from '../../core/egress/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { eventually, until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { installPublicRoot } from '../helpers/pki.js';
import { fileLogger, rigAppConfig } from '../helpers/rig-app.js';
import { sevpnLinkOf } from '../helpers/rig-links.js';
import { Rig } from '../rig/rig.js';

/** The profile with `ca` as its <ca>, as a VPN Gate profile carries the public root of its node's certificate. */
function withCa(profile: string, ca: string): string {
  return profile.replace(/<ca>[\s\S]*?<\/ca>/, `<ca>\r\n${ca.trim()}\r\n</ca>`);
}

describe.skipIf(!isRoot)('node certificates on the rig: one trust rule for three protocols (#43)', () => {
  let rig: Rig;
  let publicRoot: string;
  let rigCa: string;
  let restoreRoots: () => void = () => {};

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 2, openvpn: ['gcm-udp'] });
    publicRoot = readFileSync(rig.state.publicRootFile, 'utf8');
    rigCa = readFileSync(rig.state.caFile, 'utf8');
    restoreRoots = installPublicRoot({ certFile: rig.state.publicRootFile });
  }, 240_000);
  afterAll(() => {
    restoreRoots();
    rig?.down();
  });

  /**
   * A link to a SoftEther node with `protocol`, its profile's <ca> being `ca`, judged as the listed
   * node `name`; `inClear`: its row came on a list fetched in clear (#59).
   */
  function linkTo(nodeName: string, protocol: TunnelProtocol, ca: string, inClear = false): LinkSpec {
    const n = rig.node(nodeName);
    const serverName = n.ddns!;
    const clear = inClear ? { profileCaInClear: true } : {};
    if (protocol === 'openvpn')
      return {
        protocol,
        profileText: withCa(readFileSync(n.profiles.tcp!, 'utf8'), ca),
        remoteHost: n.vpnAddress,
        trust: { serverName, ...clear },
      };
    if (protocol === 'sstp')
      return { protocol, host: n.vpnAddress, port: 443, trust: { profileCa: [ca], serverName, ...clear } };
    return { ...sevpnLinkOf(rig, nodeName), trust: { profileCa: [ca], serverName, ...clear } };
  }

  const open = (id: string, link: LinkSpec): Promise<Tunnel> =>
    openTunnel({ id, nodeId: id, link, logger: silentLogger(), threads: false, connectTimeoutMs: 15_000 });

  async function exitOf(t: Tunnel): Promise<string> {
    const c = await t.connectTcp(rig.state.inetAddress, 80, { timeoutMs: 10_000 });
    c.stream.write('GET /ip HTTP/1.0\r\nHost: files.test\r\n\r\n');
    const chunks: Buffer[] = [];
    for await (const chunk of c.stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString().split('\r\n\r\n')[1] ?? '';
  }

  const PROTOCOLS: TunnelProtocol[] = ['openvpn', 'sevpn', 'sstp'];

  it('a certificate from a public CA for another name is refused on OpenVPN, SE-VPN and SSTP, before any login', async () => {
    const n1 = rig.softether[0]!;
    expect(n1.sstp).toBe(true);
    rig.setNodeCert(n1.name, 'public', ['attacker.example']);
    for (const p of PROTOCOLS)
      await expect(open(`evil-${p}`, linkTo(n1.name, p, publicRoot)), p).rejects.toMatchObject({
        code: 'GH_ERR_NODE_CERT_REFUSED',
        message: expect.stringMatching(
          /a public CA \(Gatehop Rig Public Root\) issued it for attacker\.example, not for rig-node1\.opengw\.net/,
        ),
      });
  }, 120_000);

  it('the same public CA for *.opengw.net (VPN Gate’s shared certificate) or the node’s own name passes on every protocol', async () => {
    const n1 = rig.softether[0]!;
    for (const names of [['*.opengw.net'], [n1.ddns!]]) {
      rig.setNodeCert(n1.name, 'public', names);
      for (const p of PROTOCOLS) {
        const t = await open(`ok-${p}`, linkTo(n1.name, p, publicRoot));
        try {
          expect(t.diagnostics().trustRule, `${p} ${names[0]}`).toBe('public-ca-name');
          expect(await exitOf(t)).toBe(n1.exitAddress);
        } finally {
          await t.close();
        }
      }
    }
  }, 180_000);

  it('a node whose profile holds its own private CA works chain-only (the rig, self-hosted servers), whatever the name', async () => {
    const n2 = rig.softether[1]!;
    for (const p of PROTOCOLS) {
      const t = await open(`private-${p}`, linkTo(n2.name, p, rigCa));
      try {
        expect(t.diagnostics().trustRule, p).toBe('private-ca');
      } finally {
        await t.close();
      }
    }
    // A stock OpenVPN 2.6 server: its certificate is for "rig-server", its profile's <ca> the rig's.
    const o1 = rig.openvpn[0]!;
    const t = await open('private-stock', {
      protocol: 'openvpn',
      profileText: readFileSync(o1.profiles.udp!, 'utf8'),
      remoteHost: o1.vpnAddress,
      trust: { serverName: 'rig-ovpn1.opengw.net' },
    });
    expect(t.diagnostics().trustRule).toBe('private-ca');
    await t.close();
  }, 120_000);

  it('a private CA that only a list fetched in clear names is refused on OpenVPN, SE-VPN and SSTP, with the reason (#59)', async () => {
    const n2 = rig.softether[1]!;
    for (const p of PROTOCOLS)
      await expect(open(`clear-${p}`, linkTo(n2.name, p, rigCa, true)), p).rejects.toMatchObject({
        code: 'GH_ERR_NODE_CERT_REFUSED',
        message: expect.stringMatching(
          /Gatehop Rig CA, a private CA that only a node list fetched without HTTPS names/,
        ),
      });
  }, 120_000);

  it('a running core fed only a list in clear ranks no node whose private CA it names, and leaves none of them in use; the same rows over HTTPS bring a tunnel up (#59)', async () => {
    const n2 = rig.softether[1]!;
    const run = async (api: string, check: (app: Awaited<ReturnType<typeof startApp>>) => Promise<void>) => {
      const dir = mkdtempSync(join(tmpdir(), 'gh-clear-'));
      const app = await startApp(
        rigAppConfig(rig, dir, {
          api: [api],
          admin: '127.0.0.1:0',
          adminToken: 'list-in-clear-test-token-1234',
          honesty: { enabled: false },
        }),
        fileLogger(join(dir, 'log.jsonl')),
      );
      try {
        await check(app);
      } finally {
        await app.stop();
      }
    };
    await run(rig.state.apiPlainUrl, async (app) => {
      const nodes = await until(
        async () => {
          const r = await apiRequest(app.listening.admin!.port, 'GET', '/nodes', {
            token: 'list-in-clear-test-token-1234',
          });
          const list = r.json<{ nodes: Array<{ id: string; excluded: string | null }> }>().nodes;
          return list.some((x) => x.excluded !== null) ? list : undefined;
        },
        60_000,
        'a ranking',
      );
      // n2 and the stock OpenVPN node carry the rig's private CA: nothing but this list names it.
      for (const id of [n2.name, rig.openvpn[0]!.name])
        expect(nodes.find((x) => x.id === id)).toMatchObject({ excluded: 'ca-in-clear' });
      expect(app.controller?.active ?? null).toBeNull();
    });
    await run(rig.state.apiUrl, async (app) => {
      await eventually(() => !!app.controller?.active, 60_000, 'a tunnel from the list over HTTPS');
    });
  }, 180_000);

  it('a running core says which rule accepted its tunnel, in /status and the log', async () => {
    const n1 = rig.softether[0]!;
    rig.setNodeCert(n1.name, 'public', ['*.opengw.net']);
    // The list's profile for the node carries the public root as its <ca>, as VPN Gate's do.
    const listed = readFileSync(n1.listProfile, 'utf8');
    writeFileSync(n1.listProfile, withCa(listed, publicRoot));
    const dir = mkdtempSync(join(tmpdir(), 'gh-trust-'));
    const app = await startApp(
      rigAppConfig(rig, dir, {
        admin: '127.0.0.1:0',
        adminToken: 'trust-rule-test-token-1234',
        groups: { mode: 'manual', defaultNode: n1.name },
        tunnel: { protocols: ['sevpn'], sevpn: { hub: 'RIG' } },
        honesty: { enabled: false },
      }),
      fileLogger(join(dir, 'log.jsonl')),
    );
    try {
      await eventually(() => app.controller?.active?.node.id === n1.name, 60_000, `${n1.name} active`);
      const status = await apiRequest(app.listening.admin!.port, 'GET', '/status', {
        token: 'trust-rule-test-token-1234',
      });
      expect(status.json<{ tunnels: Array<{ nodeId: string; trustRule: string }> }>().tunnels).toContainEqual(
        expect.objectContaining({ nodeId: n1.name, trustRule: 'public-ca-name' }),
      );
      const lines = readFileSync(join(dir, 'log.jsonl'), 'utf8');
      expect(lines).toMatch(/"event":"node-certificate".*"rule":"public-ca-name"/);
    } finally {
      await app.stop();
      writeFileSync(n1.listProfile, listed);
    }
  }, 120_000);
});
