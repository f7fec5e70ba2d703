import { ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import { isNetworkFailure } from '../reach/index.js';
import type { EgressManager, TunnelProtocol } from '../egress/index.js';
import type { Selector } from '../selector/index.js';
import type { VpnGateNode } from '../vpngate/index.js';
import type { BalanceMembers } from './balance-members.js';
import { protocolLabel, type ProtocolChoice } from './protocol-choice.js';
import type { NodeTunnel, OpenOptions, OpenTunnel } from './types.js';
import type { WarmStandby } from './warm-standby.js';

export interface NodeConnectorDeps {
  manager: EgressManager;
  selector: Selector;
  open: OpenTunnel;
  protocols: ProtocolChoice;
  /** The protocols a node can be reached with (a node without a DDNS name has no SSTP). */
  offered: (node: VpnGateNode) => readonly TunnelProtocol[];
  members: BalanceMembers;
  standby: WarmStandby;
  logger: Logger;
}

/**
 * Gets a tunnel to a node for a switch: a balance member, the warm standby or a still-draining
 * tunnel to it is taken over (no handshake); otherwise a new one, tried with each protocol the
 * node offers in the order ProtocolChoice gives (the configured order, unless this network showed
 * otherwise), never with a protocol this network blocks. Every attempt's outcome teaches ProtocolChoice; the node's history counts one
 * success or one failure per connect, whatever the protocol.
 */
export class NodeConnector {
  readonly #log: Logger;

  constructor(private readonly deps: NodeConnectorDeps) {
    this.#log = deps.logger;
  }

  async connect(node: VpnGateNode, switchId: number, o: OpenOptions): Promise<NodeTunnel | null> {
    const member = this.deps.members.release(node.id);
    if (member) {
      this.#log.info(
        { event: 'member-promoted', switchId, nodeId: node.id, egressId: member.id },
        `balance member ${node.id} becomes the active tunnel`,
      );
      return member;
    }
    const standby = this.deps.standby.take(node.id);
    if (standby) {
      this.#log.info(
        { event: 'standby-used', switchId, nodeId: node.id },
        `warm standby ${node.id} takes over without a handshake`,
      );
      return standby;
    }
    // A tunnel to this node that is still draining is taken back instead of opening a second one.
    const draining = this.deps.manager.draining
      .map((d) => d.egress as NodeTunnel)
      .find((e) => e.nodeId === node.id && e.state !== 'closed' && e.responsive);
    if (draining) {
      this.#log.info(
        { event: 'draining-reused', switchId, nodeId: node.id, egressId: draining.id },
        `${node.id}'s draining tunnel takes new sessions again`,
      );
      return draining;
    }
    const started = Date.now();
    try {
      const egress = await this.openFresh(node, o);
      this.deps.selector.recordSuccess(node.id, { connectMs: Date.now() - started });
      return egress;
    } catch (err) {
      if (o.signal.aborted) return null;
      const h = this.deps.selector.recordFailure(node.id);
      this.#log.info(
        {
          event: 'switch-candidate-failed',
          switchId,
          nodeId: node.id,
          err: (err as Error).message,
          durationMs: Date.now() - started,
          backoffUntil: h.backoffUntil,
        },
        `${node.id} did not come up: ${(err as Error).message}`,
      );
      return null;
    }
  }

  /** A new tunnel to `node` with the first of its protocols that comes up. Throws the last failure. */
  readonly openFresh = async (node: VpnGateNode, o: OpenOptions): Promise<NodeTunnel> => {
    const ladder = this.deps.protocols;
    const offered = this.deps.offered(node);
    const order = ladder.attemptOrder(node.id, offered);
    if (order.length === 0) {
      const own = ladder.nodeOrder(node.id);
      const blocked = ladder.blocked;
      throw new GatehopError(
        ErrorCodes.EGRESS_FAILED,
        own
          ? `${node.id}: none of its own protocols (tunnel.nodeProtocols: ${own.join(', ')}) can reach it`
          : blocked && ladder.orderFor(node.id, offered).includes(blocked)
            ? `${node.id}: it offers only ${protocolLabel(blocked)}, which this network blocks (${ladder.reason}); Settings → This network forgets that`
            : `${node.id}: none of tunnel.protocols (${ladder.order.join(', ')}) can reach it`,
      );
    }
    const failures: string[] = [];
    let last: unknown = null;
    for (const protocol of order) {
      o.signal.throwIfAborted();
      const started = Date.now();
      try {
        const t = await this.deps.open(node, { ...o, protocol });
        this.deps.protocols.record(node.id, protocol, true);
        return t;
      } catch (err) {
        if (o.signal.aborted) throw err;
        const msg = (err as Error).message;
        this.deps.protocols.record(node.id, protocol, false, { message: msg, network: isNetworkFailure(err) });
        this.#log.info(
          { event: 'protocol-attempt-failed', nodeId: node.id, protocol, err: msg, durationMs: Date.now() - started },
          `${node.id} over ${protocol}: ${msg}`,
        );
        failures.push(`${protocol}: ${msg}`);
        last = err;
      }
    }
    if (failures.length === 1) throw last;
    throw new GatehopError(ErrorCodes.EGRESS_FAILED, failures.join('; '), { cause: last });
  };
}
