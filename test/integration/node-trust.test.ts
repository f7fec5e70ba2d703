/**
 * One trust rule for every protocol to a node (#35; core/common/node-trust), judged over real TLS
 * handshakes on loopback: the CA in the node's own profile vouches for the chain alone; the OS
 * roots and the user's extra CA vouch only under the node's DDNS name. SSTP and SE-VPN dial
 * through the same rule, each checked here against a server whose certificate is for another name.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkNodeCertificate, silentLogger, trustedCas, type NodeTrust } from '../../core/common/index.js';
import { dialSeVpn } from '../../core/softether/index.js';
import { SstpClient } from '../../core/sstp/index.js';
import { caSignedCert } from '../helpers/self-signed.js';

const NODE = 'public-vpn-31.opengw.net';
const OTHER = 'public-vpn-32.opengw.net';

describe('the node trust rule (SSTP and SE-VPN alike)', () => {
  // The server's certificate is for NODE, from its own CA (as in the node's profile).
  const pki = caSignedCert('Node 31 CA', NODE);
  const stranger = caSignedCert('Someone else', NODE);
  let server: Server;
  let port = 0;
  const accepted = new Set<TLSSocket>();

  beforeAll(async () => {
    server = createServer({ key: pki.key, cert: pki.cert }, (s) => {
      accepted.add(s);
      s.on('error', () => {});
      // Say nothing: the dials below are judged on the certificate, before any protocol byte matters.
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of accepted) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  /** The verdict on the server's certificate under `trust`, after a real handshake. */
  const verdict = async (trust: NodeTrust): Promise<string | null> => {
    const tls = connect({
      host: '127.0.0.1',
      port,
      ca: trustedCas(trust),
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
    });
    try {
      await once(tls, 'secureConnect');
      return checkNodeCertificate(tls, trust);
    } finally {
      tls.destroy();
    }
  };

  it('the CA in the node’s profile vouches for the chain alone, whatever name is asked or none', async () => {
    expect(await verdict({ ca: [pki.ca], serverName: NODE })).toBeNull();
    expect(await verdict({ ca: [pki.ca], serverName: OTHER })).toBeNull();
    expect(await verdict({ ca: [pki.ca], serverName: null })).toBeNull();
  });

  it('the user’s extra CA vouches like an OS root: only under the node’s DDNS name', async () => {
    expect(await verdict({ ca: [], roots: [pki.ca], serverName: NODE })).toBeNull();
    expect(await verdict({ ca: [], roots: [pki.ca], serverName: OTHER })).toMatch(/^not for public-vpn-32/);
    // No DDNS name (a node from the user's own list): the roots are not asked at all.
    expect(await verdict({ ca: [], roots: [pki.ca], serverName: null })).toMatch(/^not trusted/);
  });

  it('a CA nobody named is refused, the profile’s of another node included', async () => {
    expect(await verdict({ ca: [stranger.ca], serverName: NODE })).toMatch(/^not trusted/);
    expect(await verdict({ ca: [], serverName: NODE })).toMatch(/^not trusted/);
  });

  it('SSTP dials through the rule: the profile’s CA lets a certificate for another name through to the protocol; the extra CA does not', async () => {
    const dial = (o: { ca?: string[]; profileCa?: string[] }) => {
      const c = new SstpClient({ host: '127.0.0.1', port, serverName: OTHER, ...o, logger: silentLogger() });
      c.on('error', () => {});
      return c.connect({ timeoutMs: 1_500 });
    };
    // Past TLS: the silent server then times the SSTP request out.
    await expect(dial({ profileCa: [pki.ca] })).rejects.not.toMatchObject({ code: 'GH_ERR_SSTP_TLS_FAILED' });
    await expect(dial({ ca: [pki.ca] })).rejects.toMatchObject({
      code: 'GH_ERR_SSTP_TLS_FAILED',
      message: expect.stringMatching(/certificate is refused: not for public-vpn-32/),
    });
  });

  it('SE-VPN dials through the same rule', async () => {
    const dial = (trust: NodeTrust) =>
      dialSeVpn({
        host: '127.0.0.1',
        port,
        trust,
        hub: 'VPNGATE',
        username: 'vpn',
        password: 'vpn',
        maxConnection: 1,
        signal: AbortSignal.timeout(1_500),
      });
    await expect(dial({ ca: [pki.ca], serverName: OTHER })).rejects.not.toMatchObject({
      message: expect.stringMatching(/certificate/),
    });
    await expect(dial({ ca: [], roots: [pki.ca], serverName: OTHER })).rejects.toMatchObject({
      code: 'GH_ERR_SOFTETHER_REFUSED',
      message: expect.stringMatching(/certificate is refused: not for public-vpn-32/),
    });
  });
});
