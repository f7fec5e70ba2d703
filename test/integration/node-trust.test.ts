/**
 * The node trust rule (#43; core/reach/node-trust, SECURITY.md "Node certificates"), judged over
 * real TLS handshakes on loopback. A "public" test root is installed as the process's extra roots
 * (NODE_EXTRA_CA_CERTS), as a public CA is for real: a certificate from it passes only for the
 * node's own DDNS name; a profile's private CA vouches for the chain alone; the user's own profile
 * keeps OpenVPN's meaning. SSTP and SE-VPN dial through the same rule (OpenVPN on the rig).
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import {
  judgeNodeCertificate,
  publicRoots,
  trustedCas,
  type NodeTrust,
  type TrustVerdict,
} from '../../core/reach/index.js';
import { dialSeVpn } from '../../core/softether/index.js';
import { SstpClient } from '../../core/sstp/index.js';
import { installPublicRoot, testRootCa, type IssuedCert } from '../helpers/pki.js';

const NODE = 'vpn31.opengw.net';
const OTHER = 'vpn32.opengw.net';

describe('the node trust rule (#43): a public CA only under the node’s DDNS name, a private one for the chain', () => {
  const publicRoot = testRootCa('Gatehop Test Public Root');
  const publicSub = publicRoot.intermediate('Gatehop Test Public DV CA');
  const privateCa = testRootCa('Node 31 Private CA');
  const stranger = testRootCa('Someone else');
  const certs = {
    /** What VPN Gate's nodes show: a shared wildcard from a public CA (through an intermediate). */
    wildcard: publicSub.issue(['*.opengw.net']),
    /** A node's own name from the public CA. */
    own: publicRoot.issue([NODE]),
    /** Anyone's free certificate for a name of their own: the hole this closes. */
    attacker: publicSub.issue(['attacker.example']),
    /** From the node's private CA, for whatever name (the rig's, a self-hosted server's). */
    privateAny: privateCa.issue(['rig-node1.opengw.net']),
    strangers: stranger.issue([NODE]),
  };
  let restore: () => void = () => {};
  const servers: Server[] = [];
  const accepted = new Set<TLSSocket>();
  const ports = new Map<IssuedCert, number>();

  beforeAll(async () => {
    restore = installPublicRoot(publicRoot);
    for (const c of Object.values(certs)) {
      const server = createServer({ key: c.key, cert: c.chain }, (s) => {
        accepted.add(s);
        s.on('error', () => {});
        // Say nothing: the dials below are judged on the certificate, before any protocol byte matters.
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      servers.push(server);
      ports.set(c, (server.address() as AddressInfo).port);
    }
  });
  afterAll(async () => {
    restore();
    for (const s of accepted) s.destroy();
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  });

  /** The verdict on `cert`'s server under `trust`, after a real handshake. */
  const verdict = async (cert: IssuedCert, trust: NodeTrust): Promise<TrustVerdict> => {
    const tls: TLSSocket = connect({
      host: '127.0.0.1',
      port: ports.get(cert)!,
      ca: trustedCas(trust),
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
    });
    try {
      await once(tls, 'secureConnect');
      return judgeNodeCertificate(tls, trust);
    } finally {
      tls.destroy();
    }
  };
  const listed = (profileCa: string[], serverName = NODE, extraRoots?: string[]): NodeTrust => ({
    profileCa,
    serverName,
    ...(extraRoots ? { extraRoots } : {}),
  });

  it('installs the test root as public, as the OS roots are (the Mozilla roots stay)', () => {
    const roots = publicRoots();
    expect(roots.vouchesFor(publicRoot.cert)).toMatchObject({ how: 'is a public root' });
    expect(roots.vouchesFor(publicSub.cert)).toMatchObject({ how: 'is issued by a public root' });
    expect(roots.vouchesFor(privateCa.cert)).toBeNull();
    expect(roots.pems.length).toBeGreaterThan(100);
  });

  it('a public root in the profile (VPN Gate’s ISRG Root X1) no longer lets any certificate of its CA pass for the node', async () => {
    expect(await verdict(certs.attacker, listed([publicRoot.cert]))).toEqual({
      ok: false,
      why: `a public CA (Gatehop Test Public Root) issued it for attacker.example, not for ${NODE}`,
    });
    // The same with no <ca> at all (the OS roots), or the public intermediate as <ca>.
    expect(await verdict(certs.attacker, listed([]))).toMatchObject({ ok: false });
    expect(await verdict(certs.attacker, listed([publicSub.cert]))).toMatchObject({ ok: false });
  });

  it('the node’s DDNS name from a public CA passes, and so does VPN Gate’s shared *.opengw.net for any one-label host', async () => {
    expect(await verdict(certs.own, listed([publicRoot.cert]))).toMatchObject({ ok: true, rule: 'public-ca-name' });
    expect(await verdict(certs.own, listed([publicRoot.cert], OTHER))).toMatchObject({ ok: false });
    for (const host of ['vpn118756292', 'public-vpn-100', '_unregistered_vpn123', 'VPN7'])
      expect(await verdict(certs.wildcard, listed([publicRoot.cert], `${host}.opengw.net`))).toMatchObject({
        ok: true,
        rule: 'public-ca-name',
        detail: `Gatehop Test Public Root vouches for it as ${host}.opengw.net`,
      });
    // A wildcard covers exactly one label.
    expect(await verdict(certs.wildcard, listed([publicRoot.cert], 'a.b.opengw.net'))).toMatchObject({ ok: false });
  });

  it('a private CA in the profile vouches for the chain alone, whatever the name (as OpenVPN trusts it)', async () => {
    for (const name of [NODE, OTHER])
      expect(await verdict(certs.privateAny, listed([privateCa.cert], name))).toMatchObject({
        ok: true,
        rule: 'private-ca',
      });
    // …but it is the node's own: it does not vouch for a certificate of a CA it did not sign.
    expect(await verdict(certs.strangers, listed([privateCa.cert]))).toMatchObject({ ok: false });
  });

  it('a private CA that only a list fetched in clear names vouches for nothing (#59); a public CA still does, under the name', async () => {
    const inClear = (profileCa: string[]): NodeTrust => ({ ...listed(profileCa), profileCaInClear: true });
    expect(await verdict(certs.privateAny, inClear([privateCa.cert]))).toEqual({
      ok: false,
      why: expect.stringMatching(/Node 31 Private CA, a private CA that only a node list fetched without HTTPS names/),
    });
    expect(await verdict(certs.wildcard, inClear([publicRoot.cert]))).toMatchObject({
      ok: true,
      rule: 'public-ca-name',
    });
    // The same private CA as the user's own (tunnel.nodeCa): it vouches as the user said, under the name.
    expect(await verdict(certs.strangers, { ...inClear([stranger.cert]), extraRoots: [stranger.cert] })).toMatchObject({
      ok: true,
      rule: 'public-ca-name',
    });
    // The user's own profile has no DDNS name: it is theirs, however it came.
    expect(
      await verdict(certs.privateAny, { profileCa: [privateCa.cert], serverName: null, profileCaInClear: true }),
    ).toMatchObject({
      ok: true,
      rule: 'own-profile',
    });
  });

  it('the user’s extra CA (tunnel.nodeCa) vouches like a public root: only under the DDNS name', async () => {
    expect(await verdict(certs.strangers, listed([], NODE, [stranger.cert]))).toMatchObject({
      ok: true,
      rule: 'public-ca-name',
    });
    expect(await verdict(certs.strangers, listed([], OTHER, [stranger.cert]))).toMatchObject({ ok: false });
  });

  it('the user’s own profile keeps OpenVPN’s meaning: its private <ca> for the chain; a public one only with a name to check (#59)', async () => {
    const own = (profileCa: string[]): NodeTrust => ({ profileCa, serverName: null });
    expect(await verdict(certs.privateAny, own([privateCa.cert]))).toMatchObject({ ok: true, rule: 'own-profile' });
    // A profile from vpngate.net carries a public root: anyone's free certificate chained to it passed.
    expect(await verdict(certs.attacker, own([publicRoot.cert]))).toMatchObject({
      ok: false,
      why: expect.stringMatching(/public CA .*vouches for anyone's certificate.*add "verify-x509-name/),
    });
    const checked = (name: string): NodeTrust => ({
      ...own([publicRoot.cert]),
      profileChecks: { remoteCertTls: null, verifyX509Name: { name, type: 'name' } },
    });
    expect(await verdict(certs.own, checked(NODE))).toMatchObject({ ok: true, rule: 'own-profile' });
    expect(await verdict(certs.attacker, checked(NODE))).toMatchObject({ ok: false });
    // The OS roots are not asked without a name: no <ca>, no trust.
    expect(await verdict(certs.attacker, own([]))).toMatchObject({ ok: false });
    // verify-x509-name, where the profile has it, is OpenVPN's literal CN match.
    const named = (name: string): NodeTrust => ({
      ...own([privateCa.cert]),
      profileChecks: { remoteCertTls: 'server', verifyX509Name: { name, type: 'name' } },
    });
    expect(await verdict(certs.privateAny, named('rig-node1.opengw.net'))).toMatchObject({ ok: true });
    expect(await verdict(certs.privateAny, named('someone'))).toMatchObject({
      ok: false,
      why: expect.stringMatching(/verify-x509-name someone name/),
    });
  });

  it('a CA nobody named is refused, another node’s profile CA included', async () => {
    expect(await verdict(certs.strangers, listed([privateCa.cert]))).toMatchObject({
      ok: false,
      why: expect.stringMatching(/^not trusted/),
    });
  });

  describe('every protocol dials through it', () => {
    const sstp = (cert: IssuedCert, trust: NodeTrust & { serverName: string }) => {
      const c = new SstpClient({ host: '127.0.0.1', port: ports.get(cert)!, trust, logger: silentLogger() });
      c.on('error', () => {});
      return c.connect({ timeoutMs: 1_500 });
    };
    const sevpn = (cert: IssuedCert, trust: NodeTrust) =>
      dialSeVpn({
        host: '127.0.0.1',
        port: ports.get(cert)!,
        trust,
        hub: 'VPNGATE',
        username: 'vpn',
        password: 'vpn',
        maxConnection: 1,
        signal: AbortSignal.timeout(1_500),
      });

    it('SSTP: an attacker’s public certificate is GH_ERR_NODE_CERT_REFUSED; the node’s own name gets through to the protocol', async () => {
      await expect(sstp(certs.attacker, { profileCa: [publicRoot.cert], serverName: NODE })).rejects.toMatchObject({
        code: 'GH_ERR_NODE_CERT_REFUSED',
        message: expect.stringMatching(/certificate is refused: a public CA .* not for vpn31\.opengw\.net/),
      });
      // Past TLS: the silent server then times the SSTP request out.
      await expect(sstp(certs.wildcard, { profileCa: [publicRoot.cert], serverName: NODE })).rejects.not.toMatchObject({
        code: 'GH_ERR_NODE_CERT_REFUSED',
      });
    });

    it('SE-VPN: the same', async () => {
      await expect(sevpn(certs.attacker, { profileCa: [publicRoot.cert], serverName: NODE })).rejects.toMatchObject({
        code: 'GH_ERR_NODE_CERT_REFUSED',
      });
      await expect(
        sevpn(certs.privateAny, { profileCa: [privateCa.cert], serverName: NODE }),
      ).rejects.not.toMatchObject({ code: 'GH_ERR_NODE_CERT_REFUSED' });
    });
  });
});
