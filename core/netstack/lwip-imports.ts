import { randomBytes } from 'node:crypto';
import { ipv4FromWasm } from './ipv4.js';
import type { LwipMemory } from './lwip-memory.js';
import type { StackEvent } from './stack-types.js';
import type { LwipImports } from './wasm-module.js';

/** Where what lwIP says during a call goes: queued by the stack, handled once the call returns. */
export interface LwipSink {
  memory: LwipMemory;
  /** The instance's memory (known only once it is instantiated, after these imports are made). */
  wasmMemory(): WebAssembly.Memory;
  event(ev: StackEvent): void;
  output(packet: Buffer): void;
  /** js_assert: never returns (the stack remembers the failure and unwinds with it). */
  assertionFailed(file: string, line: number): never;
}

/** The functions lwIP (glue.c) calls: each copies what it is given out of lwIP's memory and queues it. */
export function lwipImports(sink: LwipSink): LwipImports {
  const t0 = performance.now();
  const { memory } = sink;
  return {
    js_now: () => Math.floor(performance.now() - t0) >>> 0,
    js_rand: () => randomBytes(4).readUInt32LE(),
    js_assert: (file, line) => {
      const mem = new Uint8Array(sink.wasmMemory().buffer);
      let end = file;
      while (end < mem.length && mem[end] !== 0 && end - file < 256) end++;
      const name = Buffer.from(mem.subarray(file, end)).toString('latin1');
      sink.assertionFailed(name, line);
    },
    js_output: (ptr, len) => sink.output(memory.copyPacket(ptr, len)),
    js_tcp_connected: (id) => sink.event({ t: 'connected', id }),
    js_tcp_recv: (id, ptr, len) => sink.event({ t: 'data', id, data: memory.copyData(ptr, len) }),
    js_tcp_fin: (id) => sink.event({ t: 'fin', id }),
    js_tcp_sent: (id) => sink.event({ t: 'sent', id }),
    js_tcp_err: (id, err) => sink.event({ t: 'err', id, err }),
    js_tcp_poll: (id) => sink.event({ t: 'poll', id }),
    js_udp_recv: (id, ptr, len, src, port) =>
      sink.event({ t: 'udp', id, data: memory.copyOut(ptr, len), address: ipv4FromWasm(src), port }),
    js_icmp_reply: (src, ident, seq) => sink.event({ t: 'icmp', address: ipv4FromWasm(src), ident, seq }),
    js_tcp_accepted: (listenerId, id, pcb, ip, port, localIp, localPort) =>
      sink.event({
        t: 'accepted',
        listenerId,
        id,
        pcb,
        address: ipv4FromWasm(ip),
        port,
        localAddress: ipv4FromWasm(localIp),
        localPort,
      }),
    js_eth_addr: (ip, mask, gw, dns1, dns2) => {
      const address = ipv4FromWasm(ip);
      const gateway = ipv4FromWasm(gw);
      const dns = [dns1, dns2].filter((d) => d !== 0).map(ipv4FromWasm);
      sink.event({
        t: 'lease',
        lease:
          address === '0.0.0.0'
            ? null
            : { address, netmask: ipv4FromWasm(mask), gateway, dns: dns.length ? dns : [gateway] },
      });
    },
  };
}
