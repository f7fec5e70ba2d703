import type { TunnelProtocol } from '../egress/index.js';
import type { Egress } from '../contracts/index.js';
import type { HealthSource } from '../health/index.js';
import type { VpnGateNode } from '../vpngate/index.js';

/** A tunnel to one node, as the controller needs it (TunnelEgress is one). */
export interface NodeTunnel extends Egress, HealthSource {
  readonly nodeId: string;
  /** Which protocol carries it (OpenVPN when not said). */
  readonly protocol?: TunnelProtocol;
  /** The node's own resolvers, as the tunnel gave them (an honesty check asks them). */
  readonly dnsServers?: readonly string[];
  /** False while the server has been silent past the liveness limit. */
  readonly responsive: boolean;
  onClose(fn: (reason: string) => void): () => void;
  onLiveness(fn: (responsive: boolean, quietMs: number) => void): () => void;
}

export interface OpenOptions {
  signal: AbortSignal;
  timeoutMs: number;
  id: string;
}

/** Opens a tunnel to a node with one protocol (the app's hook: it knows profiles, routes and CAs). */
export type OpenTunnel = (node: VpnGateNode, opts: OpenOptions & { protocol: TunnelProtocol }) => Promise<NodeTunnel>;

/** Opens a tunnel to a node with whichever of its protocols comes up first, in the chosen order. */
export type NodeOpener = (node: VpnGateNode, opts: OpenOptions) => Promise<NodeTunnel>;

export type SwitchState = 'idle' | 'selecting' | 'connecting' | 'promoting' | 'draining';

/**
 * user: an explicit request (API, tray); urgent: the active tunnel died or went quiet, or there is
 * none; auto: health or a better node (subject to the anti-flap policy).
 */
export type SwitchKind = 'user' | 'auto' | 'urgent';

export interface SwitchRecord {
  id: number;
  at: number;
  kind: SwitchKind;
  reason: string;
  from: string | null;
  to: string | null;
  outcome: 'switched' | 'failed' | 'no-candidate' | 'skipped';
  durationMs: number;
  /** The protocol the new tunnel speaks. */
  protocol?: TunnelProtocol;
  error?: string;
  /** Why the node in use was left (#60): how it failed in use, or 'died' (its tunnel went). Absent: it was not left for failing. */
  leftFor?: 'link' | 'dns' | 'connects' | 'stall' | 'slow' | 'other' | 'died' | 'flapping';
}

export type ControllerEvent =
  | { type: 'state'; state: SwitchState; switchId: number; reason: string }
  | { type: 'switch'; record: SwitchRecord }
  | { type: 'pin-failed'; nodeId: string; reason: string }
  | { type: 'mode'; mode: 'auto' | 'manual'; pinned: string | null }
  | { type: 'url-test'; nodeId: string; ms: number | null }
  | { type: 'protocol-learned'; preferred: TunnelProtocol | null; blocked: TunnelProtocol | null; reason: string }
  /** A balance member started taking sessions. */
  | { type: 'member-up'; nodeId: string; egressId: string };

/** A held tunnel: the node, its egress, since when, and the listeners to remove when it goes. */
export interface Held {
  node: VpnGateNode;
  egress: NodeTunnel;
  since: number;
  off: Array<() => void>;
  /** Its drop (silence, then the close that follows) was counted towards flapping: once per tunnel. */
  dropCounted?: boolean;
}
