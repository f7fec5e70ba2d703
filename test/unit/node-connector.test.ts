/**
 * A fresh tunnel to a node (core/groups/node-connector.ts) is tried only with protocols the
 * network lets through (#58): every tunnel Gatehop opens (switches, warm standbys, balance members,
 * delay tests, honesty checks) goes through openFresh, so a protocol the ladder knows blocked is
 * never attempted, even when the protocols before it fail on that node.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import type { TunnelProtocol } from '../../core/egress/index.js';
import { NodeConnector } from '../../core/groups/node-connector.js';
import { ProtocolChoice } from '../../core/groups/index.js';
import type { NodeTunnel } from '../../core/groups/index.js';
import type { VpnGateNode } from '../../core/vpngate/index.js';

const ORDER: TunnelProtocol[] = ['openvpn', 'sevpn', 'sstp'];

function connectorOn(ladder: ProtocolChoice, offered: TunnelProtocol[], works: TunnelProtocol | null) {
  const attempts: TunnelProtocol[] = [];
  const connector = new NodeConnector({
    protocols: ladder,
    offered: () => offered,
    open: (_node, o) => {
      attempts.push(o.protocol);
      return o.protocol === works
        ? Promise.resolve({ id: 't', nodeId: 'n' } as unknown as NodeTunnel)
        : Promise.reject(new Error(`${o.protocol} failed`));
    },
    logger: silentLogger(),
    // openFresh asks nothing of these.
    manager: null as never,
    selector: null as never,
    members: null as never,
    standby: null as never,
  });
  return { connector, attempts };
}

/** A ladder on a network that taught: OpenVPN blocked, SE-VPN works. */
function taughtLadder(): ProtocolChoice {
  const ladder = new ProtocolChoice({ order: ORDER, learn: true }, null, silentLogger());
  ladder.record('seen', 'openvpn', false, { message: 'no answer', network: true });
  ladder.record('seen', 'sevpn', true);
  expect(ladder.blocked).toBe('openvpn');
  return ladder;
}

const node = { id: 'n' } as VpnGateNode;
const opts = () => ({ signal: new AbortController().signal, timeoutMs: 1_000, id: 't' });

describe('NodeConnector.openFresh and the protocol ladder (#58)', () => {
  it('tries every offered protocol in order while nothing is known blocked', async () => {
    const ladder = new ProtocolChoice({ order: ORDER, learn: true }, null, silentLogger());
    const { connector, attempts } = connectorOn(ladder, ORDER, 'sstp');
    await connector.openFresh(node, opts());
    expect(attempts).toEqual(['openvpn', 'sevpn', 'sstp']);
  });

  it('never attempts the blocked protocol, even when every other one fails on the node', async () => {
    const { connector, attempts } = connectorOn(taughtLadder(), ORDER, null);
    await expect(connector.openFresh(node, opts())).rejects.toThrow(/sevpn: sevpn failed; sstp: sstp failed/);
    expect(attempts).toEqual(['sevpn', 'sstp']);
  });

  it('a node that offers only the blocked protocol is not dialled, and the error says why and what to do', async () => {
    const { connector, attempts } = connectorOn(taughtLadder(), ['openvpn'], 'openvpn');
    await expect(connector.openFresh(node, opts())).rejects.toMatchObject({
      code: 'GH_ERR_EGRESS_FAILED',
      message: expect.stringMatching(
        /n: it offers only OpenVPN, which this network blocks \(.*\); Settings → This network forgets that/,
      ),
    });
    expect(attempts).toEqual([]);
  });
});
