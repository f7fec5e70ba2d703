import { describe, expect, it } from 'vitest';
import { HubMacs, macForNode } from '../../core/egress/index.js';

describe('each open SE-VPN tunnel to a node has a MAC of its own on the hub', () => {
  it('the first has the node’s stable MAC; one opened beside it another; a released MAC is taken again', () => {
    const macs = new HubMacs();
    const a = macs.take('rig-node1');
    expect(a.mac).toBe(macForNode('rig-node1').toString('hex'));
    // An honesty check's own tunnel, or make-before-break to the same node: not the same MAC.
    const b = macs.take('rig-node1');
    expect(b.mac).not.toBe(a.mac);
    expect(Number.parseInt(b.mac.slice(0, 2), 16) & 0x03).toBe(0x02); // locally administered, unicast
    expect(macs.take('rig-node2').mac).toBe(macForNode('rig-node2').toString('hex'));
    expect(macs.held('rig-node1')).toBe(2);
    a.release();
    a.release(); // twice is once
    expect(macs.held('rig-node1')).toBe(1);
    expect(macs.take('rig-node1').mac).toBe(a.mac);
    b.release();
    expect(macs.take('rig-node1').mac).toBe(b.mac);
  });
});
