import type { Logger } from '../common/index.js';
import { TUNNEL_PROTOCOLS } from '../egress/index.js';
import { HealthMonitor, SwitchPolicy, type HealthMonitorEvents } from '../health/index.js';
import { FailFilter } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import { ActiveProbes } from './active-probes.js';
import { BalanceMembers } from './balance-members.js';
import { LeaveRules } from './leave-rules.js';
import { NodeConnector } from './node-connector.js';
import { ProtocolChoice } from './protocol-choice.js';
import { Reevaluation } from './reevaluation.js';
import type { SwitchControllerDeps } from './controller-deps.js';
import type { ControllerEvent, Held, NodeTunnel } from './types.js';
import { UrlTests } from './url-tests.js';
import { WarmStandby } from './warm-standby.js';

/** The parts the switch controller drives, each in its own file; made and wired in one place. */
export interface ControllerParts {
  failFilter: FailFilter;
  protocols: ProtocolChoice;
  urlTests: UrlTests;
  probes: ActiveProbes;
  standby: WarmStandby;
  members: BalanceMembers;
  connector: NodeConnector;
  policy: SwitchPolicy;
  rounds: Reevaluation;
  leave: LeaveRules;
  monitor: HealthMonitor;
}

/** What the parts ask of the controller itself. */
export interface ControllerHooks {
  /** The controller's current deps (a reload replaces them). */
  deps(): SwitchControllerDeps;
  active(): Held | null;
  /** `${kind}-N`, N counting every tunnel the controller opens. */
  tunnelId(kind: string): string;
  emit(ev: ControllerEvent): void;
  /** The active tunnel's probes found its node dead. */
  activeProbedDead(held: Held, why: string): void;
  health: Required<Pick<HealthMonitorEvents, 'onUnhealthy' | 'fasterNodeKnown' | 'onWindow'>>;
  signal: AbortSignal;
}

export function makeControllerParts(first: SwitchControllerDeps, log: Logger, h: ControllerHooks): ControllerParts {
  const options = () => h.deps().options;
  const failFilter = new FailFilter(first.options.failFilter);
  const protocols =
    first.ladder ??
    new ProtocolChoice(
      first.protocols ?? { order: TUNNEL_PROTOCOLS, learn: true },
      first.protocolMemory ?? null,
      first.logger,
    );
  protocols.onLearned((e) => h.emit({ type: 'protocol-learned', ...e }));
  // A fresh tunnel to a node, protocol by protocol: the connector's, also for members, standby and delay tests.
  const openFresh = (
    node: VpnGateNode,
    o: { signal: AbortSignal; timeoutMs: number; id: string },
  ): Promise<NodeTunnel> => connector.openFresh(node, o);
  const flagged = (id: string): boolean => !!first.honesty?.flagged(id);
  const urlTests: UrlTests = new UrlTests({
    selector: first.selector,
    manager: first.manager,
    nodes: first.nodes,
    open: openFresh,
    options,
    held: () => [h.active()?.egress, standby.held?.egress],
    tunnelId: () => h.tunnelId('delay'),
    onResult: (nodeId, ms) => h.emit({ type: 'url-test', nodeId, ms }),
    signal: h.signal,
    logger: log,
  });
  const probes: ActiveProbes = new ActiveProbes({
    failFilter,
    probes: () => options().probes,
    maxFails: () => options().failFilter.maxFails,
    onRtt: (nodeId, ms) => urlTests.rtt.set(nodeId, ms),
    onDead: (held, why) => h.activeProbedDead(held, why),
    logger: log,
  });
  const standby: WarmStandby = new WarmStandby({
    manager: first.manager,
    flagged,
    selector: first.selector,
    open: openFresh,
    enabled: () => options().warmStandby,
    connectTimeoutMs: () => options().connectTimeoutMs,
    activeId: () => h.active()?.node.id ?? null,
    tunnelId: () => h.tunnelId('standby'),
    signal: h.signal,
    logger: log,
  });
  const members: BalanceMembers = new BalanceMembers({
    manager: first.manager,
    selector: first.selector,
    nodes: first.nodes,
    open: openFresh,
    failFilter,
    options: () => ({ ...options(), maxFails: options().failFilter.maxFails }),
    reserved: () => new Set([h.active()?.node.id, standby.held?.node.id].filter((id): id is string => !!id)),
    tunnelId: (kind) => h.tunnelId(kind),
    onRtt: (nodeId, ms) => urlTests.rtt.set(nodeId, ms),
    onUp: (nodeId, egress: NodeTunnel) => h.emit({ type: 'member-up', nodeId, egressId: egress.id }),
    flagged,
    signal: h.signal,
    logger: first.logger,
  });
  const connector: NodeConnector = new NodeConnector({
    manager: first.manager,
    selector: first.selector,
    open: first.open,
    protocols,
    offered: first.offered ?? (() => ['openvpn']),
    members,
    standby,
    logger: log,
  });
  const policy: SwitchPolicy = new SwitchPolicy(first.health);
  const rounds: Reevaluation = new Reevaluation({
    selector: first.selector,
    nodes: first.nodes,
    policy,
    urlTests,
    failFilter,
    flagged,
    logger: log,
  });
  const leave: LeaveRules = new LeaveRules({
    selector: first.selector,
    health: () => h.deps().health,
    policy,
    logger: log,
  });
  const monitor: HealthMonitor = new HealthMonitor(first.health, h.health, first.logger);
  return { failFilter, protocols, urlTests, probes, standby, members, connector, policy, rounds, leave, monitor };
}
