import type { TunnelDiagnostics, TunnelEgressOptions } from '../tunnel-types.js';

/** What crosses a thread boundary for an error: GatehopError's code and message. */
export interface WireError {
  code: string;
  message: string;
}

/**
 * Unacknowledged bytes one stream may have in flight across the boundary, each way. The receiver
 * acknowledges what its consumer took, so a consumer that stops reading stops the sender once this
 * much waits (and, behind it, lwIP's receive window or the client socket closes).
 */
export const STREAM_WINDOW_BYTES = 256 * 1024;

/**
 * Acknowledgements go out once this much is owed (or when a consumer that was full asks for more),
 * not per message. Below the window, so a blocked sender always gets one: it blocks only with a
 * whole window unacknowledged.
 */
export const ACK_EVERY_BYTES = 64 * 1024;

/** One stream's side of the boundary windows, as the worker sees it (diagnostics only). */
export interface HostedStreamState {
  id: number;
  /** Sent to the main thread, not yet acknowledged by it. */
  inFlight: number;
  /** Taken from the main thread, not yet acknowledged to it. */
  unacked: number;
  /** Paused because the main thread's window is full. */
  paused: boolean;
  readableLength: number;
  writableLength: number;
  /** lwIP's view, where the stream is the netstack's (state, windows, retransmissions). */
  tcp: unknown;
}

/** What the tunnel's open yields, for the main thread's copy of the egress. */
export interface TunnelOpened {
  diagnostics: TunnelDiagnostics;
  /** The resolvers the tunnel gave (pushed, or the hub's DHCP lease): the node's own. */
  dnsServers: string[];
}

/** Main thread → tunnel worker. Stream and socket ids are chosen by the main thread. */
export type ToTunnel =
  | { t: 'open'; data: TunnelWorkerData }
  | { t: 'connect'; id: number; host: string; port: number; timeoutMs: number }
  | { t: 'abort'; id: number }
  | { t: 'data'; id: number; data: ArrayBuffer }
  | { t: 'ack'; id: number; bytes: number }
  | { t: 'end'; id: number }
  | { t: 'destroy'; id: number; error: WireError | null }
  | { t: 'resolve'; req: number; host: string }
  | { t: 'measure-dns'; req: number }
  /** Each hosted stream's flow-control state (StreamFlowState), for diagnosing a stalled transfer. */
  | { t: 'inspect-streams'; req: number }
  | { t: 'udp-open'; id: number }
  | { t: 'udp-send'; id: number; data: ArrayBuffer; address: string; port: number }
  | { t: 'udp-close'; id: number }
  | { t: 'close' };

/** Tunnel worker → main thread. */
export type FromTunnel =
  | { t: 'opened'; info: TunnelOpened }
  | { t: 'open-failed'; error: WireError }
  | { t: 'connected'; id: number; localAddress: string; localPort: number; remoteAddress: string; remotePort: number }
  | { t: 'connect-failed'; id: number; error: WireError }
  | { t: 'data'; id: number; data: ArrayBuffer }
  | { t: 'ack'; id: number; bytes: number }
  | { t: 'fin'; id: number }
  | { t: 'closed'; id: number; error: WireError | null }
  | { t: 'udp-message'; id: number; data: ArrayBuffer; address: string; port: number }
  | { t: 'udp-closed'; id: number }
  | { t: 'result'; req: number; value: unknown; error: WireError | null }
  | { t: 'liveness'; responsive: boolean; quietMs: number }
  | { t: 'heartbeat'; diagnostics: TunnelDiagnostics }
  | { t: 'down'; reason: string }
  | { t: 'log'; line: string }
  /** The thread's tunnel has ended (or its open failed) and it waits for the next 'open'. */
  | { t: 'idle' };

/** What the worker opens (its first message: a pooled worker starts before it knows its tunnel). */
export type TunnelWorkerData = Omit<TunnelEgressOptions, 'logger' | 'signal'> & { logLevel: string };
