import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Which build: the tunnels' client stack, or the capture gateway's (every address is its own). */
export type LwipBuild = 'client' | 'gateway';

const compiled = new Map<LwipBuild, WebAssembly.Module>();

/** An lwIP module, compiled once per process and instantiated once per stack. */
export function lwipModule(build: LwipBuild = 'client'): WebAssembly.Module {
  let module = compiled.get(build);
  if (!module) {
    // Literal URLs, so bundlers see (and copy) both files.
    const url =
      build === 'client'
        ? new URL('./lwip/lwip.wasm', import.meta.url)
        : new URL('./lwip/lwip-gateway.wasm', import.meta.url);
    module = new WebAssembly.Module(readFileSync(wasmPath(fileURLToPath(url))));
    compiled.set(build, module);
  }
  return module;
}

/**
 * In a packaged app the .wasm is unpacked beside app.asar (asarUnpack): read it there, which works
 * whether or not this thread's fs knows about asar archives (a worker thread's may not).
 */
export function wasmPath(path: string): string {
  const unpacked = path.replace(/([\\/])app\.asar([\\/])/, '$1app.asar.unpacked$2');
  return unpacked !== path && existsSync(unpacked) ? unpacked : path;
}

/** The glue's exports (core/netstack/lwip/glue.c). Pointers are byte offsets into memory. */
export interface LwipExports {
  memory: WebAssembly.Memory;
  _initialize(): void;
  gh_init(ip: number, mask: number, gw: number, mtu: number): number;
  gh_init_eth(mac: number, mtu: number): number;
  gh_dhcp_release(): void;
  gh_set_checksums(on: number): void;
  gh_malloc(n: number): number;
  gh_free(p: number): void;
  gh_scratch(): number;
  gh_check_timeouts(): void;
  gh_input_alloc(len: number): number;
  gh_input_commit(): number;
  gh_tcp_connect(id: number, ip: number, port: number): number;
  gh_tcp_listen(id: number, port: number): number;
  gh_tcp_listen_close(pcb: number): void;
  gh_tcp_sndbuf(pcb: number): number;
  gh_tcp_sndqueuelen(pcb: number): number;
  gh_tcp_write(pcb: number, data: number, len: number, more: number): number;
  gh_tcp_output(pcb: number): number;
  gh_tcp_recved(pcb: number, len: number): void;
  gh_tcp_shutdown_tx(pcb: number): number;
  gh_tcp_close(pcb: number): void;
  gh_tcp_abort(pcb: number): void;
  gh_tcp_info(pcb: number, out: number): void;
  gh_udp_new(id: number): number;
  gh_udp_local_port(pcb: number): number;
  gh_udp_sendto(pcb: number, data: number, len: number, ip: number, port: number): number;
  gh_udp_remove(pcb: number): void;
  gh_ping(ip: number, ident: number, seq: number, size: number): number;
  gh_stats(out: number): void;
  gh_heap_bytes(): number;
  gh_set_quickack(on: number): void;
  gh_flush_acks(): void;
  gh_set_batching(on: number): void;
  gh_set_defer_wnd_update(on: number): void;
}

/** Callbacks lwIP makes into the host, all during a call into the module. */
export interface LwipImports {
  js_now(): number;
  js_rand(): number;
  js_assert(file: number, line: number): void;
  js_output(data: number, len: number): void;
  js_tcp_connected(id: number): void;
  js_tcp_recv(id: number, data: number, len: number): void;
  js_tcp_fin(id: number): void;
  js_tcp_sent(id: number, len: number): void;
  js_tcp_err(id: number, err: number): void;
  js_tcp_poll(id: number): void;
  js_udp_recv(id: number, data: number, len: number, srcIp: number, srcPort: number): void;
  js_icmp_reply(srcIp: number, ident: number, seq: number): void;
  js_tcp_accepted(
    listenerId: number,
    connId: number,
    pcb: number,
    remoteIp: number,
    remotePort: number,
    localIp: number,
    localPort: number,
  ): void;
  js_eth_addr(ip: number, mask: number, gw: number, dns1: number, dns2: number): void;
}
