import { isIP } from 'node:net';
import { ipv4ToWasm } from './ipv4.js';
import { LwipErr } from './lwip-errors.js';
import type { PcbHost } from './tcp-ops.js';
import type { UdpPcbOps } from './udp-socket.js';

/** One UDP socket's operations on its lwIP pcb: send (IPv4, one datagram), its port, close. */
export function udpPcbOps(host: PcbHost, id: number, pcb: number): UdpPcbOps {
  const { ex } = host;
  return {
    send: (data, ip, port) => {
      if (host.closed() || isIP(ip) !== 4 || data.length > 65_507) return LwipErr.VAL;
      return host.call(() => {
        const ptr = ex.gh_malloc(data.length || 1);
        if (ptr === 0) return LwipErr.MEM;
        new Uint8Array(ex.memory.buffer, ptr, data.length).set(data);
        const err = ex.gh_udp_sendto(pcb, ptr, data.length, ipv4ToWasm(ip), port);
        ex.gh_free(ptr);
        return err;
      });
    },
    localPort: () => (host.closed() ? 0 : ex.gh_udp_local_port(pcb)),
    close: () => {
      host.releaseUdp(id);
      if (!host.closed()) host.call(() => ex.gh_udp_remove(pcb));
    },
  };
}
