import type { TcpInfo, TcpPcbOps } from './tcp-stream.js';
import type { LwipExports } from './wasm-module.js';

/** Words of gh_tcp_info's answer. */
export const TCP_INFO_WORDS = 12;

/** What a socket's operations need of its stack (tcp-ops.ts, udp-ops.ts). */
export interface PcbHost {
  ex: LwipExports;
  /** The stack's one way into lwIP (depth counted, queued work handled after). */
  call<T>(fn: () => T): T;
  /** A failed stack's pcbs are gone with its memory: nothing to close there. */
  failed(): boolean;
  closed(): boolean;
  /** lwIP memory for a write's bytes, and for gh_tcp_info's answer. */
  scratch: number;
  infoPtr: number;
  /** The socket let go of its pcb: the stack forgets it. */
  releaseTcp(id: number): void;
  releaseUdp(id: number): void;
}

/** One TCP connection's operations on its lwIP pcb, each through the stack's call. */
export function tcpPcbOps(host: PcbHost, id: number, pcb: number): TcpPcbOps {
  const { ex } = host;
  return {
    sndbuf: () => host.call(() => ex.gh_tcp_sndbuf(pcb)),
    write: (data, offset, len, more) =>
      host.call(() => {
        new Uint8Array(ex.memory.buffer, host.scratch, len).set(data.subarray(offset, offset + len));
        return ex.gh_tcp_write(pcb, host.scratch, len, more ? 1 : 0);
      }),
    output: () => void host.call(() => ex.gh_tcp_output(pcb)),
    recved: (len) => host.call(() => ex.gh_tcp_recved(pcb, len)),
    shutdownTx: () => host.call(() => ex.gh_tcp_shutdown_tx(pcb)),
    close: () => {
      if (!host.failed()) host.call(() => ex.gh_tcp_close(pcb));
    },
    abort: () => {
      if (!host.failed()) host.call(() => ex.gh_tcp_abort(pcb));
    },
    info: (): TcpInfo => {
      const w = host.call(() => {
        ex.gh_tcp_info(pcb, host.infoPtr);
        return new Uint32Array(ex.memory.buffer, host.infoPtr, TCP_INFO_WORDS).slice();
      });
      return {
        state: w[0]!,
        srttMs: w[1]!,
        retransmissions: w[2]!,
        sndBuf: w[3]!,
        rcvWnd: w[4]!,
        mss: w[5]!,
        localPort: w[6]!,
        rcvAnnWnd: w[8]!,
        idleMs: w[9]!,
        sndWnd: w[10]!,
        windowUpdatesResent: w[11]!,
      };
    },
    release: () => host.releaseTcp(id),
  };
}
