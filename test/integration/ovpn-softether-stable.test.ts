import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { Op, parseProfile, TunnelClient } from '../../core/ovpn/index.js';
import { StableServer } from '../helpers/stable-server.js';
import { selfSignedCert } from '../helpers/self-signed.js';

/**
 * The SoftEther Stable (4.x) behaviours VPN Gate nodes have and the rig's Debian 5.01 server does
 * not (notes §5.7), against a server constructed from the notes (test/helpers/stable-server.ts).
 */
let pem: { cert: string; key: string };
beforeAll(() => {
  pem = selfSignedCert('stable.test');
});

const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0)) o.close();
});

function profile(port: number, cipher: string): string {
  // The shape of a VPN Gate profile; the dummy client certificate is never checked by the server.
  return [
    'client',
    'dev tun',
    'proto udp',
    `remote 127.0.0.1 ${port}`,
    `cipher ${cipher}`,
    'auth SHA1',
    `<ca>\n${pem.cert}</ca>`,
    `<cert>\n${pem.cert}</cert>`,
    `<key>\n${pem.key}</key>`,
    '',
  ].join('\n');
}

async function connect(server: StableServer, cipher = 'AES-128-CBC'): Promise<TunnelClient> {
  const client = new TunnelClient({ profile: parseProfile(profile(server.port, cipher)), logger: silentLogger() });
  open.push(client);
  await client.connect({ timeoutMs: 20_000 });
  return client;
}

/** A minimal IPv4/ICMP echo request, enough to be recognisable on the other side. */
const ipPacket = Buffer.from('4500001c000100004001f7c70ad301050ad30106080000000000000000', 'hex');

describe('a SoftEther Stable 4.x node (constructed from the notes)', () => {
  it("connects: net30 push reply, ping 3 / ping-restart 10, Stable's duplicate PUSH_REPLY ignored, P_DATA_V1 both ways", async () => {
    const server = await StableServer.start(pem);
    open.push(server);
    const client = await connect(server);
    expect(client.config).toMatchObject({
      address: '10.211.1.5',
      gateway: '10.211.1.6',
      dns: ['10.211.1.6'],
      pingS: 3,
      pingRestartS: 10,
      peerId: null,
      tlsEkm: false,
    });
    expect(client.cipher).toBe('AES-128-CBC');
    // Our options string asks for an L3 tunnel (anything else means L2/TAP to SoftEther).
    expect(server.clientOptions).toMatch(/^V4,dev-type tun,/);

    // Data both ways, V1 only (Stable would parse opcode 9 as a control packet).
    const got = new Promise<Buffer>((r) => client.once('packets', (batch) => r(batch[0]!)));
    server.sendData(ipPacket);
    expect(await got).toEqual(ipPacket);
    client.write(ipPacket);
    await expect.poll(() => server.dataIn.some((p) => p.equals(ipPacket))).toBe(true);

    // Stable answers every later PUSH_REQUEST with its stored reply: once configured, that changes nothing.
    const before = { ...client.config };
    await expect.poll(() => server.pushRequests, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(client.state).toBe('CONNECTED');
    expect(client.config).toEqual(before);
  });

  it('asking for AES-256-GCM, uses the AES-128-CBC that Stable ≤ 4.43 answers with in its options string', async () => {
    const server = await StableServer.start(pem);
    open.push(server);
    const client = await connect(server, 'AES-256-GCM');
    expect(server.chosenCipher).toBe('AES-128-CBC');
    expect(client.cipher).toBe('AES-128-CBC');
    const got = new Promise<Buffer>((r) => client.once('packets', (batch) => r(batch[0]!)));
    server.sendData(ipPacket);
    expect(await got).toEqual(ipPacket);
  });

  it('never sends more than 4 acks in a packet, nor a second hard reset once the server answered (Stable would drop it, or wipe key 0)', async () => {
    const server = await StableServer.start(pem);
    open.push(server);
    await connect(server);
    expect(server.received.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...server.received.map((p) => p.acks.length))).toBeLessThanOrEqual(4);
    expect(server.received.filter((p) => p.opcode === Op.CONTROL_HARD_RESET_CLIENT_V2)).toHaveLength(1);
    expect(server.received.some((p) => p.opcode === Op.DATA_V2)).toBe(false);
  });

  it('a TLS handshake that goes unanswered (dropped, not refused) is a timeout: no retry with TLS 1.0 and weak ciphers (#34 item 2)', async () => {
    const server = await StableServer.start({ ...pem, silentTls: 'drop' });
    open.push(server);
    const client = new TunnelClient({
      profile: parseProfile(profile(server.port, 'AES-128-CBC')),
      logger: silentLogger(),
      tlsHandshakeMs: 1_500,
    });
    open.push(client);
    await expect(client.connect({ timeoutMs: 4_000 })).rejects.toMatchObject({
      code: 'GH_ERR_EGRESS_CONNECT_TIMEOUT',
      message: expect.stringMatching(/no TLS handshake within/),
    });
    expect(client.legacyTls).toBe(false);
    // One session: the landed code started a second one offering TLS 1.0 with SECLEVEL 0.
    expect(server.sessionsSeen).toHaveLength(1);
  }, 30_000);

  it('a server that acknowledges our ClientHello and answers nothing (how OpenVPN refuses a TLS version) gets one more try with legacy TLS', async () => {
    const server = await StableServer.start({ ...pem, silentTls: 'ack' });
    open.push(server);
    const client = new TunnelClient({
      profile: parseProfile(profile(server.port, 'AES-128-CBC')),
      logger: silentLogger(),
      tlsHandshakeMs: 1_500,
    });
    open.push(client);
    await expect(client.connect({ timeoutMs: 6_000 })).rejects.toMatchObject({
      message: expect.stringMatching(/took our TLS hello and did not answer/),
    });
    expect(client.legacyTls).toBe(true);
    expect(server.sessionsSeen).toHaveLength(2);
  }, 40_000);

  it('a server reset that never comes: starts over with a new session id (Stable answers a reset once, notes §2.4)', async () => {
    const server = await StableServer.start({ ...pem, ignoreSessions: 1 });
    open.push(server);
    const client = await connect(server);
    expect(client.state).toBe('CONNECTED');
    expect(server.sessionsSeen).toHaveLength(2);
  }, 30_000);
});
