import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What gatehop-native (native/, Node-API) exports at the ABI this core was written for. */
export interface NativeModule {
  readonly abi: number;
  /**
   * malloc_trim(0) on a thread-pool thread (one took 208 ms in the soak: not on the main thread):
   * true when memory was released, false when none was, undefined without glibc.
   */
  heapTrim(): Promise<boolean | undefined>;
  /**
   * mallopt(M_ARENA_MAX, max): at most `max` glibc malloc arenas from now on, threads beyond sharing
   * them (native/src/heap.c); undefined without glibc. Throws a RangeError outside 1..64.
   */
  limitArenas(max: number): boolean | undefined;
  /** How many glibc malloc arenas the process has (malloc_info); undefined without glibc. */
  mallocArenas(): number | undefined;
  /**
   * What glibc's malloc holds across every arena (mallinfo2), bytes: held by the program (inUse) or
   * free in its chunks, of what the arenas took from the OS (system); undefined without glibc 2.33.
   */
  mallocTotals(): MallocTotals | undefined;
  /** Which libcrypto the data channel functions use ("the process": Node's own), or why none. */
  cryptoStatus(): { library: string; version: string } | { reason: string };
  /** One OpenVPN key's data channel, keyed once (native/src/data_key.c); throws GATEHOP_NATIVE_*. */
  dataKeyOpen(spec: NativeDataKeySpec): NativeDataKey;
  /** Seals each payload into out, end to end ([u16 length] before each when tcpFraming); bytes written. */
  dataSeal(
    key: NativeDataKey,
    payloads: readonly Uint8Array[],
    out: Buffer,
    lengths: Uint32Array,
    tcpFraming: boolean,
  ): number;
  /** Opens each packet in place: results[2i] its payload's offset, results[2i+1] its length, or -1 (failed) / -2 (replayed). */
  dataOpen(key: NativeDataKey, packets: readonly Uint8Array[], results: Int32Array): void;
  /**
   * A connected UDP socket read by recvmmsg on this thread's event loop (native/src/udp_socket.c)
   * into `recv` (at least 64 slots of 4,096 bytes; datagram i in slot i): onRead(recv, count) with
   * lengths[i] each one's size (0: truncated), or onRead(null, -errno) on a socket error. `recv`
   * is read into again once onRead returns. Throws GATEHOP_NATIVE_SOCKET / _UNSUPPORTED (not Linux).
   */
  udpOpen(
    ip: string,
    port: number,
    rcvbuf: number,
    lengths: Uint32Array,
    recv: Buffer,
    onRead: (data: Buffer | null, count: number) => void,
  ): NativeUdpSocket;
  /** sendmmsg(2) of count datagrams laid end to end in data; how many the kernel took (0 once closed). */
  udpSend(socket: NativeUdpSocket, data: Buffer, lengths: Uint32Array, count: number): number;
  /** Stops reading and closes the socket; idempotent. */
  udpClose(socket: NativeUdpSocket): void;
  /**
   * An IPv4 TCP socket, not connected, whose SYN offers at most `mss` (TCP_MAXSEG before connect;
   * native/src/tcp_socket.c): its descriptor, for net.Socket({ fd }). Throws
   * GATEHOP_NATIVE_ARGUMENT (mss outside 536–1460), _SOCKET, or _UNSUPPORTED (not Linux).
   */
  tcpSocket(mss: number): number;
}

/** glibc malloc's totals across arenas (mallinfo2(3)), bytes. */
export interface MallocTotals {
  /** Taken from the OS by the arenas (the main heap's brk and the thread arenas' mmapped heaps). */
  systemBytes: number;
  /** In chunks the program holds. */
  inUseBytes: number;
  /** In free chunks; part of it may be madvised away already (malloc_trim), so not all resident. */
  freeBytes: number;
  /** The main arena's free top, which a trim releases. */
  topBytes: number;
  /** Chunks mmapped on their own (above the mmap threshold). */
  mmappedBytes: number;
}

/** An opaque native UDP socket; closed when garbage if nobody closed it. */
export type NativeUdpSocket = { readonly __nativeUdpSocket: unique symbol };

/**
 * One OpenVPN key's data-channel bytes, each direction's cut to its cipher's and digest's sizes:
 * the one definition both data engines key with (core/ovpn's DataKeyMaterial adds what the
 * JavaScript engine needs; NativeDataKeySpec what the addon reads).
 */
export interface DataKeyBytes {
  keyId: number;
  encKey: Buffer;
  decKey: Buffer;
  encHmac: Buffer;
  decHmac: Buffer;
  /** AEAD implicit IVs: the first 8 bytes of each direction's HMAC key (openvpn-protocol-notes §6.3). */
  encIv: Buffer;
  decIv: Buffer;
}

/** The key as the addon reads it (native/src/data_key.c: plain names and numbers). */
export interface NativeDataKeySpec extends DataKeyBytes {
  /** OpenSSL's name: aes-128-cbc, aes-256-gcm, chacha20-poly1305, … */
  cipher: string;
  /** OpenSSL's name (sha1, sha256, sha512); null for AEAD ciphers. */
  digest: string | null;
  /** The pushed peer-id for P_DATA_V2; -1 for P_DATA_V1. */
  peerId: number;
}

/** An opaque native handle; its contexts are freed when it is garbage. */
export type NativeDataKey = { readonly __nativeDataKey: unique symbol };

/** The exports' meaning this core expects (native/src/addon.c GATEHOP_NATIVE_ABI). */
const EXPECTED_ABI = 6;
const BINARY = join('native', 'build', 'Release', 'gatehop_native.node');

export type NativeStatus = { loaded: true; path: string } | { loaded: false; reason: string };

let cached: { module: NativeModule | null; status: NativeStatus } | undefined;

export type DataEngine = 'native' | 'javascript';

/**
 * Which engine tunnels' data paths use, and why: native (core/ovpn's DataChannel keyed once,
 * batched UDP) where gatehop-native loaded and found a libcrypto (Node's own, or the system's
 * under Electron), else the JavaScript one. For /status and the log.
 */
export function dataEngineStatus(): { engine: DataEngine; reason: string | null; library: string | null } {
  const native = loadNative();
  if (!native)
    return {
      engine: 'javascript',
      reason: `the native module is not loaded: ${(nativeStatus() as { reason: string }).reason}`,
      library: null,
    };
  const c = native.cryptoStatus();
  if ('reason' in c)
    return { engine: 'javascript', reason: `the native module found no libcrypto: ${c.reason}`, library: null };
  return { engine: 'native', reason: null, library: `${c.version} (${c.library})` };
}

/**
 * The native module, loaded once, or null where it is absent (not built: no C toolchain at
 * install), refused (a build for another ABI) or turned off with GATEHOP_NATIVE=off (how the tests
 * run the JavaScript path). Everything that uses it has a JavaScript path; `nativeStatus()` says
 * which runs and why.
 */
export function loadNative(): NativeModule | null {
  return (cached ??= load()).module;
}

export function nativeStatus(): NativeStatus {
  return (cached ??= load()).status;
}

function load(): { module: NativeModule | null; status: NativeStatus } {
  if (process.env.GATEHOP_NATIVE === 'off')
    return { module: null, status: { loaded: false, reason: 'turned off (GATEHOP_NATIVE=off)' } };
  const path = findBinary();
  if (!path)
    return {
      module: null,
      status: {
        loaded: false,
        reason: `not built (${BINARY} not found; npm ci or node scripts/build-native.mjs builds it)`,
      },
    };
  try {
    const mod = createRequire(import.meta.url)(path) as NativeModule;
    if (mod.abi !== EXPECTED_ABI)
      return {
        module: null,
        status: {
          loaded: false,
          reason: `${path} is ABI ${String(mod.abi)}, this core needs ${EXPECTED_ABI}: rebuild it`,
        },
      };
    return { module: mod, status: { loaded: true, path } };
  } catch (err) {
    return { module: null, status: { loaded: false, reason: `${path} did not load: ${(err as Error).message}` } };
  }
}

/**
 * The binary in the project folder above this file: core/common (source), dist/core/common
 * (built) and app.asar/dist/core/common (packaged; Electron reads the unpacked copy for us).
 * GATEHOP_NATIVE_PATH names another one.
 */
function findBinary(): string | null {
  const named = process.env.GATEHOP_NATIVE_PATH;
  if (named) return existsSync(named) ? named : null;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, BINARY);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return null;
}

/**
 * `gatehop run`'s helper (native/src/gatehop-capture.c, built beside the module on Linux), found as
 * the module is; GATEHOP_CAPTURE_HELPER names another one. Null where it was not built.
 */
export function captureHelperPath(): string | null {
  const named = process.env.GATEHOP_CAPTURE_HELPER;
  if (named) return existsSync(named) ? named : null;
  const helper = join('native', 'build', 'Release', 'gatehop-capture');
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    // A packaged app runs it from the unpacked copy (an executable cannot run from inside app.asar).
    const candidate = join(dir, helper).replace(/([\\/])app\.asar([\\/])/, '$1app.asar.unpacked$2');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return null;
}
