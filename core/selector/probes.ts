import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { abortReason, ErrorCodes, GatehopError, settleFirst, type SettleFirstOptions } from '../common/index.js';
import {
  dialThroughUpstream,
  parseSocks5Udp,
  socks5UdpAssociate,
  socks5UdpHeader,
  type UpstreamProxy,
} from '../reach/index.js';

export interface ProbeOptions {
  samples: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface ProbeResult {
  /** Median of the successful samples, or null when none succeeded. */
  rttMs: number | null;
  samples: Array<number | null>;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A probe's wait: aborted with the signal, given up after `timeoutMs` saying what did not come. */
function probeWait(
  host: string,
  port: number,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  silence: string,
  way = '',
): SettleFirstOptions & { deadline: NonNullable<SettleFirstOptions['deadline']> } {
  return {
    signal,
    what: `probe ${host}:${port}`,
    deadline: {
      ms: timeoutMs,
      error: () =>
        new GatehopError(
          ErrorCodes.EGRESS_CONNECT_TIMEOUT,
          `probe ${host}:${port}${way}: ${silence} within ${timeoutMs} ms`,
        ),
    },
  };
}

/** A probe of host:port: its time in ms, or a rejection; through the upstream proxy when one is given. */
export type Probe = (
  host: string,
  port: number,
  timeoutMs: number,
  signal?: AbortSignal,
  upstream?: UpstreamProxy | null,
) => Promise<number>;

/** A probe's common start: an aborted signal rejects at once; an upstream proxy gets its own way. */
function probe(
  direct: (host: string, port: number, timeoutMs: number, signal?: AbortSignal) => Promise<number>,
  through: (
    host: string,
    port: number,
    timeoutMs: number,
    upstream: UpstreamProxy,
    signal?: AbortSignal,
  ) => Promise<number>,
): Probe {
  return (host, port, timeoutMs, signal, upstream) => {
    if (signal?.aborted) return Promise.reject(abortReason(signal, `probe ${host}:${port}`));
    return upstream ? through(host, port, timeoutMs, upstream, signal) : direct(host, port, timeoutMs, signal);
  };
}

/** One TCP handshake: connect, note the time, close at once. Through an upstream proxy: until it says the target is connected. */
export const tcpHandshakeMs: Probe = probe(
  (host, port, timeoutMs, signal) => {
    const started = performance.now();
    return settleFirst<number>(probeWait(host, port, timeoutMs, signal, 'no handshake'), (settle) => {
      const s = connect({ host, port });
      s.once('connect', () => settle.resolve(performance.now() - started));
      s.once('error', (err) => settle.reject(err));
      return () => s.destroy();
    });
  },
  (host, port, timeoutMs, upstream, signal) => {
    const started = performance.now();
    return dialThroughUpstream(upstream, host, port, { timeoutMs, ...(signal ? { signal } : {}) }).then((s) => {
      s.destroy();
      return performance.now() - started;
    });
  },
);

/**
 * One OpenVPN hard-reset exchange over UDP (a UDP port has no handshake): P_CONTROL_HARD_RESET_CLIENT_V2
 * with a fresh session id from a fresh socket (SoftEther keys sessions by address and port), timed
 * until the server's P_CONTROL_HARD_RESET_SERVER_V2 arrives.
 */
export const openvpnUdpResetMs: Probe = probe(
  (host, port, timeoutMs, signal) =>
    settleFirst<number>(probeWait(host, port, timeoutMs, signal, 'no OpenVPN reset reply', '/udp'), (settle) => {
      const sock = createSocket('udp4');
      let started = 0;
      sock.on('error', (err) => settle.reject(err));
      // A connected socket hears only the address it asked (host may be a name).
      sock.on('message', (msg) => {
        if (isServerReset(msg)) settle.resolve(performance.now() - started);
      });
      sock.connect(port, host, () => {
        started = performance.now();
        sock.send(hardResetPacket());
      });
      return () => sock.close();
    }),
  (host, port, timeoutMs, upstream, signal) => udpResetThroughRelay(host, port, timeoutMs, upstream, signal),
);

// byte0 = (P_CONTROL_HARD_RESET_CLIENT_V2 = 7) << 3 | key_id 0; session id; 0 acks; message id 0
function hardResetPacket(): Buffer {
  return Buffer.concat([Buffer.from([7 << 3]), randomBytes(8), Buffer.from([0, 0, 0, 0, 0])]);
}

/** P_CONTROL_HARD_RESET_SERVER_V2 = 8. */
function isServerReset(msg: Buffer): boolean {
  return msg.length >= 14 && msg[0]! >> 3 === 8;
}

/** The same exchange through a SOCKS5 proxy's UDP relay; the time includes setting up the association. */
async function udpResetThroughRelay(
  host: string,
  port: number,
  timeoutMs: number,
  upstream: UpstreamProxy,
  signal?: AbortSignal,
): Promise<number> {
  const started = performance.now();
  const { control, relay } = await socks5UdpAssociate(upstream, { timeoutMs, ...(signal ? { signal } : {}) });
  const sock = createSocket('udp4');
  try {
    const wait = probeWait(host, port, timeoutMs, signal, 'no OpenVPN reset reply', `/udp through ${upstream.display}`);
    return await settleFirst<number>(
      { ...wait, deadline: { ...wait.deadline, ms: Math.max(1, timeoutMs - (performance.now() - started)) } },
      (settle) => {
        control.once('close', () =>
          settle.reject(new GatehopError(ErrorCodes.UPSTREAM_FAILED, `${upstream.display} ended the UDP association`)),
        );
        sock.on('error', (err) => settle.reject(err));
        sock.on('message', (msg) => {
          const d = parseSocks5Udp(msg);
          if (d && isServerReset(d.data)) settle.resolve(performance.now() - started);
        });
        sock.connect(relay.port, relay.host, () => sock.send([socks5UdpHeader(host, port), hardResetPacket()]));
      },
    );
  } finally {
    sock.close();
    control.destroy();
  }
}

/** Several samples, sequential per node; median of the successes. */
export async function probeNode(
  kind: 'tcp' | 'udp',
  host: string,
  port: number,
  opts: ProbeOptions & { upstream?: UpstreamProxy | null },
): Promise<ProbeResult> {
  const samples: Array<number | null> = [];
  for (let i = 0; i < opts.samples; i++) {
    opts.signal?.throwIfAborted();
    try {
      samples.push(
        await (kind === 'tcp' ? tcpHandshakeMs : openvpnUdpResetMs)(
          host,
          port,
          opts.timeoutMs,
          opts.signal,
          opts.upstream,
        ),
      );
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      samples.push(null);
    }
  }
  const ok = samples.filter((s): s is number => s !== null);
  return { rttMs: ok.length > 0 ? median(ok) : null, samples };
}

/** Runs `fn` over items with at most `concurrency` at once. */
export async function mapBounded<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return out;
}
