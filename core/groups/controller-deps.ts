import type { Logger } from '../common/index.js';
import type { EgressManager, TunnelProtocol } from '../egress/index.js';
import type { HealthOptions } from '../health/index.js';
import type { Selector } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import type { GroupOptions } from './options.js';
import type { ProtocolChoice, ProtocolChoiceOptions, ProtocolMemory } from './protocol-choice.js';
import type { SelectionState } from './selection.js';
import type { OpenTunnel } from './types.js';

/** What the switch controller is made with (the app assembles it). */
export interface SwitchControllerDeps {
  manager: EgressManager;
  selector: Selector;
  /** The current node pool. */
  nodes: () => readonly VpnGateNode[];
  open: OpenTunnel;
  selection: SelectionState;
  options: GroupOptions;
  health: HealthOptions;
  logger: Logger;
  /** The protocols a node can be reached with, in no order (default: OpenVPN only). */
  offered?: (node: VpnGateNode) => readonly TunnelProtocol[];
  /** The protocol order and learning (config tunnel.protocols, tunnel.learnProtocol). */
  protocols?: ProtocolChoiceOptions;
  /** Where what a network taught about protocols is kept. */
  protocolMemory?: ProtocolMemory;
  /**
   * The ladder itself, made before the controller (the app makes it with the node pipeline, so the
   * first probes already know what this network blocks); given, `protocols` and `protocolMemory`
   * are not used.
   */
  ladder?: ProtocolChoice;
  /**
   * The honesty verdicts (core/honesty): a flagged node is never chosen automatically (ranked,
   * member, standby, better node); a pin goes to one only when the user accepted it.
   */
  honesty?: NodeVerdicts;
}

/** What the controller asks of the honesty checks. */
export interface NodeVerdicts {
  /** Found to tamper. */
  flagged(nodeId: string): unknown;
  /** Found to tamper and not accepted by the user. */
  blocked(nodeId: string): unknown;
}
