/**
 * The Ethernet link (#35, SE-VPN's hub port): lwIP's DHCP client asks from the MAC it was given,
 * and without an answer no address appears. The rig test (softether-rig) takes a real lease from
 * SoftEther's SecureNAT and downloads through it.
 */
import { describe, expect, it } from 'vitest';
import { Stack } from '../../core/netstack/index.js';

describe('an Ethernet link', () => {
  it('broadcasts a DHCP DISCOVER from its MAC at once, and waits for a lease (GH_ERR_EGRESS_CONNECT_TIMEOUT without one)', async () => {
    const frames: Buffer[] = [];
    const mac = Buffer.from('02000000beef', 'hex');
    const stack = new Stack({ ethernet: { mac }, mtu: 1500, output: (f) => frames.push(f) });
    try {
      expect(stack.address).toBe('0.0.0.0');
      await expect(stack.whenLeased({ timeoutMs: 300 })).rejects.toMatchObject({
        code: 'GH_ERR_EGRESS_CONNECT_TIMEOUT',
      });
      const discover = frames.find((f) => f.readUInt16BE(12) === 0x0800 && f[23] === 17 && f.readUInt16BE(36) === 67);
      expect(discover).toBeDefined();
      expect(discover!.subarray(0, 6)).toEqual(Buffer.alloc(6, 0xff)); // broadcast
      expect(discover!.subarray(6, 12)).toEqual(mac);
      expect(discover!.readUInt16BE(34)).toBe(68); // from the DHCP client port
      expect(discover!.subarray(14 + 20 + 8 + 28, 14 + 20 + 8 + 34)).toEqual(mac); // chaddr
      expect(stack.lease).toBeNull();
    } finally {
      stack.close();
    }
  });

  it('refuses a MAC that is not 6 bytes', () => {
    expect(() => new Stack({ ethernet: { mac: Buffer.alloc(5) }, mtu: 1500, output: () => {} })).toThrow(TypeError);
  });
});
