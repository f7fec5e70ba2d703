import { ErrorCodes, GatehopError } from '../common/index.js';
import { ipv4ToWasm, netmaskFrom } from './ipv4.js';
import { lwipImports, type LwipSink } from './lwip-imports.js';
import { STATS_WORDS } from './stack-stats.js';
import type { StackOptions } from './stack-types.js';
import { TCP_INFO_WORDS } from './tcp-ops.js';
import { lwipModule, type LwipExports } from './wasm-module.js';

/**
 * One lwIP instance made and initialised for a stack: the client or the gateway build, its one
 * interface (raw IP with an address, or Ethernet with a MAC), checksums and quick ACKs as asked,
 * and the buffers the stack reads TCP info and statistics through. `instantiated` runs before lwIP
 * initialises, so whatever it calls back into already finds the instance.
 */
export function startLwip(
  opts: StackOptions,
  hooks: Omit<LwipSink, 'wasmMemory'> & { instantiated: (ex: LwipExports) => void },
): { ex: LwipExports; infoPtr: number; statsPtr: number; scratch: number } {
  const { instantiated, ...imports } = hooks;
  let ex: LwipExports | null = null;
  const instance = new WebAssembly.Instance(lwipModule(opts.captureGateway ? 'gateway' : 'client'), {
    env: lwipImports({ ...imports, wasmMemory: () => ex!.memory }) as unknown as WebAssembly.ModuleImports,
  });
  ex = instance.exports as unknown as LwipExports;
  instantiated(ex);
  ex._initialize();
  let rc: number;
  if (opts.ethernet) {
    const mac = ex.gh_malloc(6);
    new Uint8Array(ex.memory.buffer, mac, 6).set(opts.ethernet.mac);
    rc = ex.gh_init_eth(mac, opts.mtu);
    ex.gh_free(mac);
  } else {
    rc = ex.gh_init(
      ipv4ToWasm(opts.address!),
      ipv4ToWasm(netmaskFrom(opts.netmask ?? 24)),
      ipv4ToWasm(opts.gateway ?? '0.0.0.0'),
      opts.mtu,
    );
  }
  if (rc !== 0) throw new GatehopError(ErrorCodes.NETSTACK_FAILED, `lwIP init failed (${rc})`);
  ex.gh_set_checksums(opts.checksums === false ? 0 : 1);
  ex.gh_set_quickack((opts.acks ?? 'each-segment') === 'each-segment' ? 1 : 0);
  return {
    ex,
    infoPtr: ex.gh_malloc(TCP_INFO_WORDS * 4),
    statsPtr: ex.gh_malloc(STATS_WORDS * 4),
    scratch: ex.gh_scratch(),
  };
}
