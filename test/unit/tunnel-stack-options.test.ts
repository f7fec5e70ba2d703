import { CARRIER_PATH_MTU } from '../../core/reach/index.js';
import { describe, expect, it } from 'vitest';
import { stackOptionsOf, tunnelStackOptions } from '../../core/egress/index.js';
import type { PushedConfig } from '../../core/ovpn/index.js';

const base: PushedConfig = {
  address: '10.8.0.2',
  netmask: '255.255.255.0',
  gateway: '10.8.0.1',
  dns: [],
  pingS: 10,
  pingRestartS: 60,
  cipher: 'AES-256-GCM',
  peerId: null,
  tlsEkm: false,
  ccExit: false,
  compression: null,
  topology: 'subnet',
  tunMtu: null,
};

describe('a tunnel netstack from the pushed config', () => {
  it("acks per batch over UDP and once a turn over TCP and TLS carriers (never on lwIP's timer, which stalls SecureNAT)", () => {
    expect(tunnelStackOptions(base, 'udp').acks).toBe('per-batch');
    expect(tunnelStackOptions({ ...base, peerId: 0 }, 'tcp').acks).toBe('per-turn');
    const link = { address: '0.0.0.0', netmask: '0.0.0.0', gateway: null, dns: [], mtu: 1500, keepaliveS: 10 };
    expect(stackOptionsOf({ ...link, transport: 'tls' }).acks).toBe('per-turn');
    expect(stackOptionsOf({ ...link, transport: 'tls', ethernet: { mac: Buffer.alloc(6, 2) } }).acks).toBe('per-turn');
  });

  it('keeps UDP carrier datagrams within the 1,280-byte path budget (#60) and honours a smaller pushed tun-mtu', () => {
    // 1,188 inner + OpenVPN's worst 64 (CBC IV and padding, HMAC-SHA1, ids) + IP and UDP's 28.
    expect(tunnelStackOptions(base, 'udp').mtu).toBe(1188);
    expect(tunnelStackOptions(base, 'udp').mtu + 92).toBe(CARRIER_PATH_MTU);
    expect(tunnelStackOptions(base, 'tcp').mtu).toBe(1500);
    expect(tunnelStackOptions({ ...base, tunMtu: 1300 }, 'tcp').mtu).toBe(1300);
    expect(tunnelStackOptions({ ...base, gateway: null }, 'tcp').gateway).toBe('10.8.0.2');
  });
});
