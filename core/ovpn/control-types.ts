import type { Logger } from '../common/index.js';
import type { NodeTrust } from '../reach/index.js';
import type { PushedConfig } from './control-messages.js';
import type { ControlWrapper } from './control-wrap.js';
import type { OvpnProfile } from './profile.js';

/** The states a session passes through on its way up (the client adds its own around them). */
export type SessionState = 'WAIT' | 'AUTH' | 'GET_CONFIG';

/** What the session needs from the client around it. */
export interface ControlSessionHost {
  /** A control packet (wrapped) onto the carrier. */
  sendRaw(packet: Buffer): void;
  state(s: SessionState, reason: string): void;
  /** The session cannot go on; reconnect: false when the server itself is the fault. */
  fatal(err: Error, opts?: { reconnect?: boolean }): void;
  /** The server's configuration arrived and key 0's data channel is ready. */
  configured(config: PushedConfig): void;
  /** A renegotiated key carries traffic from now on. */
  renegotiated(keyId: number): void;
  /** A control packet that was not ours or not well formed, dropped. */
  malformed(): void;
}

export interface ControlSessionOptions {
  profile: OvpnProfile;
  proto: 'tcp' | 'udp';
  /** The server's name or address, in messages. */
  remoteHost: string;
  credentials?: { username: string; password: string } | undefined;
  wrapper: ControlWrapper | null;
  /** TLS 1.0+ and SECLEVEL 0 (a node that refused modern TLS). */
  legacyTls: boolean;
  /** Whom the server's certificate may come from: the node trust rule (core/reach/node-trust). */
  trust: NodeTrust;
  tlsHandshakeMs: number;
  maxServerRenegotiationsPerMinute: number;
  logger: Logger;
}
