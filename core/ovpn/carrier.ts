import type { GatehopError, Logger } from '../common/index.js';
import type { UpstreamProxy } from '../reach/index.js';
import type { SealedBatch } from './data-channel.js';

/** The ways an OpenVPN session reaches its server. */
export type CarrierKind = 'tcp' | 'tcp-upstream' | 'udp-native' | 'udp' | 'udp-upstream';

/** Where a carrier delivers what it reads, and says that it broke. */
export interface CarrierSink {
  /** OpenVPN packets in arrival order, several per call where the transport read several at once. */
  packets(packets: Buffer[]): void;
  /** The transport failed or the server ended it; the carrier says nothing after this. */
  failed(err: GatehopError): void;
  /** A datagram that was not the server's (through a relay), dropped. */
  malformed(): void;
}

/**
 * One open way to the server that carries OpenVPN packets: the session above it neither knows nor
 * asks which. Sends never block: what the transport cannot take now is dropped and counted by the
 * caller (UDP loses it anyway; TCP past a bounded backlog is a stalled server).
 */
export interface Carrier {
  readonly kind: CarrierKind;
  /** A stream (TCP): sealed batches must carry OpenVPN's 2-byte record lengths. */
  readonly framed: boolean;
  /** One packet; false when it was dropped. */
  send(packet: Buffer): boolean;
  /** A sealed batch; how many of its packets went, and their bytes (without record lengths). */
  sendBatch(batch: SealedBatch): { sent: number; bytes: number };
  /** Idempotent; no sink call follows. */
  close(): void;
}

export interface CarrierOptions {
  host: string;
  port: number;
  proto: 'tcp' | 'udp';
  upstream: UpstreamProxy | null;
  sink: CarrierSink;
  logger: Logger;
  /** Gives up the opening (its attempt timed out or the tunnel closed): nothing is left half-open. */
  signal?: AbortSignal;
}
