import type { Duplex } from 'node:stream';

/**
 * A session's client side: a proxy client's socket, or a captured program's connection ended by the
 * capture gateway's stack (core/capture). What the session reads of it beyond a Duplex.
 */
export type ClientConnection = Duplex & {
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  readonly localAddress?: string | undefined;
  readonly localPort?: number | undefined;
  readonly bytesWritten?: number | undefined;
  /** A TCP socket's close by reset: what the peer has not read yet is dropped, not delivered. */
  resetAndDestroy?: () => unknown;
};
