/**
 * Which protocol a node is tried with first (core/groups/protocol-choice.ts, issue #22): the
 * configured order; SSTP first once OpenVPN failed on three different nodes while SSTP worked;
 * remembered per network and started afresh on another; per node, what worked there first.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { LESSON_TTL_MS, ProtocolChoice, type ProtocolMemory } from '../../core/groups/index.js';

const BOTH = ['openvpn', 'sstp'] as const;

function memory(): ProtocolMemory & { kept: Map<string, unknown> } {
  const kept = new Map<string, { preferred: 'openvpn' | 'sstp' | 'sevpn' | null; reason: string }>();
  return { kept, load: (n) => kept.get(n) ?? null, save: (n, v) => void kept.set(n, v) };
}

describe('ProtocolChoice', () => {
  it('follows the configured order, among the protocols a node offers', () => {
    const c = new ProtocolChoice({ order: ['sstp', 'openvpn'], learn: true }, null, silentLogger());
    expect(c.orderFor('a', BOTH)).toEqual(['sstp', 'openvpn']);
    expect(c.orderFor('own-profile', ['openvpn'])).toEqual(['openvpn']);
    expect(new ProtocolChoice({ order: ['openvpn'], learn: true }, null, silentLogger()).orderFor('a', BOTH)).toEqual([
      'openvpn',
    ]);
  });

  it('puts SSTP first after OpenVPN failed on three different nodes while SSTP worked, and says why once', () => {
    const c = new ProtocolChoice({ order: ['openvpn', 'sstp'], learn: true }, memory(), silentLogger());
    const said: unknown[] = [];
    c.onLearned((e) => said.push(e));
    c.record('a', 'openvpn', false, 'timed out');
    c.record('a', 'sstp', true);
    c.record('a', 'openvpn', false, 'timed out'); // the same node again: still one node
    c.record('b', 'openvpn', false, 'timed out');
    expect(c.preferred).toBeNull();
    c.record('c', 'openvpn', false, 'timed out');
    expect(c.preferred).toBe('sstp');
    expect(c.reason).toBe('OpenVPN failed on 3 different nodes while SSTP worked: this network seems to block OpenVPN');
    expect(said).toEqual([{ preferred: 'sstp', blocked: 'openvpn', reason: c.reason }]);
    expect(c.orderFor('d', BOTH)).toEqual(['sstp', 'openvpn']);
    c.record('e', 'openvpn', false);
    expect(said).toHaveLength(1);
  });

  it('learns at once when a protocol got no answer from a node where another then worked, and keeps it for a week (#44)', () => {
    const mem = memory();
    const c = new ProtocolChoice({ order: ['openvpn', 'sevpn', 'sstp'], learn: true }, mem, silentLogger());
    c.setNetwork('net-a');
    // The node's answer (a refused certificate, a refused login) teaches nothing about the network.
    c.record('a', 'openvpn', false, { message: 'certificate refused', network: false });
    c.record('a', 'sevpn', true);
    expect(c.preferred).toBeNull();
    // Silence, a reset, a refused port: the network's.
    c.record('b', 'openvpn', false, { message: 'no TLS handshake within 8 s', network: true });
    expect(c.preferred).toBeNull(); // nothing worked on b yet
    c.record('b', 'sevpn', true);
    expect(c.preferred).toBe('sevpn');
    expect(c.blocked).toBe('openvpn');
    expect(c.reason).toMatch(/^OpenVPN got no answer from b \(no TLS handshake within 8 s\) while SE-VPN worked there/);
    const lesson = c.lesson!;
    expect(lesson.expiresAt - lesson.at).toBe(LESSON_TTL_MS);
    expect(LESSON_TTL_MS).toBe(7 * 86_400_000);
    // The next start on this network knows it; a week later it is gone, and saved as gone.
    const next = new ProtocolChoice({ order: ['openvpn', 'sevpn', 'sstp'], learn: true }, mem, silentLogger());
    next.setNetwork('net-a');
    expect(next.blocked).toBe('openvpn');
    mem.kept.set('net-a', { ...(mem.kept.get('net-a') as object), at: Date.now() - LESSON_TTL_MS - 1 });
    const later = new ProtocolChoice({ order: ['openvpn', 'sevpn', 'sstp'], learn: true }, mem, silentLogger());
    later.setNetwork('net-a');
    expect(later.preferred).toBeNull();
    expect(later.reason).toMatch(/over 7 days old: every protocol is tried again/);
    expect(mem.kept.get('net-a')).toMatchObject({ preferred: null });
  });

  it('the user forgets what a network taught: every protocol is tried again, and the next start too (#44)', () => {
    const mem = memory();
    const c = new ProtocolChoice({ order: ['openvpn', 'sevpn'], learn: true }, mem, silentLogger());
    c.setNetwork('net-a');
    c.record('b', 'openvpn', false, { message: 'timed out', network: true });
    c.record('b', 'sevpn', true);
    expect(c.lesson).not.toBeNull();
    c.forget();
    expect(c.lesson).toBeNull();
    expect(c.orderFor('x', ['openvpn', 'sevpn'])).toEqual(['openvpn', 'sevpn']);
    const next = new ProtocolChoice({ order: ['openvpn', 'sevpn'], learn: true }, mem, silentLogger());
    next.setNetwork('net-a');
    expect(next.preferred).toBeNull();
  });

  it('does not learn from dead nodes: OpenVPN working anywhere since clears the failures', () => {
    const c = new ProtocolChoice({ order: ['openvpn', 'sstp'], learn: true }, null, silentLogger());
    c.record('a', 'sstp', true);
    c.record('a', 'openvpn', false);
    c.record('b', 'openvpn', false);
    c.record('c', 'openvpn', true); // OpenVPN gets through here: a and b were just down
    c.record('d', 'openvpn', false);
    c.record('e', 'openvpn', false);
    expect(c.preferred).toBeNull();
    // A filter that starts later: three more failures after the last success, and it is learnt.
    c.record('f', 'openvpn', false);
    expect(c.preferred).toBe('sstp');
    // With learning off nothing is learnt at all.
    const off = new ProtocolChoice({ order: ['openvpn', 'sstp'], learn: false }, null, silentLogger());
    off.record('s', 'sstp', true);
    for (const n of ['a', 'b', 'c', 'd']) off.record(n, 'openvpn', false);
    expect(off.preferred).toBeNull();
  });

  it("a node's own order (tunnel.nodeProtocols) replaces the configured one for that node, and what the network taught does not reorder it", () => {
    const c = new ProtocolChoice(
      { order: ['openvpn', 'sevpn', 'sstp'], nodeOrders: { mine: ['sstp', 'openvpn'], only: ['sevpn'] }, learn: true },
      memory(),
      silentLogger(),
    );
    const ALL = ['openvpn', 'sevpn', 'sstp'] as const;
    expect(c.orderFor('mine', ALL)).toEqual(['sstp', 'openvpn']);
    expect(c.orderFor('only', ALL)).toEqual(['sevpn']);
    expect(c.orderFor('only', ['openvpn'])).toEqual([]); // forbidden everything it offers: nothing to try
    expect(c.orderFor('other', ALL)).toEqual(['openvpn', 'sevpn', 'sstp']);
    // This network blocks OpenVPN: other nodes go SE-VPN first; the user's orders stand.
    for (const n of ['a', 'b', 'c']) {
      c.record(n, 'openvpn', false, 'timed out');
      c.record(n, 'sevpn', true);
    }
    expect(c.preferred).toBe('sevpn');
    expect(c.orderFor('other', ALL)).toEqual(['sevpn', 'openvpn', 'sstp']);
    expect(c.orderFor('mine', ALL)).toEqual(['sstp', 'openvpn']);
    expect(c.nodeOrder('mine')).toEqual(['sstp', 'openvpn']);
    expect(c.nodeOrder('other')).toBeNull();
    expect(c.nodeOrder('toString')).toBeNull(); // an id is a key, not a property of every object
    // Changed live (a reload): the node follows the configured order again.
    c.updateOptions({ order: ['openvpn', 'sevpn', 'sstp'], learn: true });
    expect(c.orderFor('mine', ALL)).toEqual(['sevpn', 'openvpn', 'sstp']);
  });

  it('per node, what worked there goes before what just failed there', () => {
    const c = new ProtocolChoice({ order: ['openvpn', 'sstp'], learn: true }, null, silentLogger());
    c.record('a', 'openvpn', false);
    expect(c.orderFor('a', BOTH)).toEqual(['openvpn', 'sstp']); // SSTP never worked there: no reason to change
    c.record('a', 'sstp', true);
    expect(c.orderFor('a', BOTH)).toEqual(['sstp', 'openvpn']);
    expect(c.orderFor('b', BOTH)).toEqual(['openvpn', 'sstp']);
    expect(c.nodeRecord('a')).toMatchObject({
      openvpn: { tried: 1, worked: 0, lastOk: false },
      sstp: { tried: 1, worked: 1, lastOk: true, lastError: null },
    });
  });

  it('remembers what a network taught, for that network: another one starts from the configured order, coming back restores it', () => {
    const mem = memory();
    const c = new ProtocolChoice({ order: ['openvpn', 'sstp'], learn: true }, mem, silentLogger());
    c.setNetwork('home');
    c.record('s', 'sstp', true);
    for (const n of ['a', 'b', 'c']) c.record(n, 'openvpn', false);
    expect(c.preferred).toBe('sstp');
    c.setNetwork('cafe');
    expect(c.preferred).toBeNull();
    expect(c.orderFor('x', BOTH)).toEqual(['openvpn', 'sstp']);
    c.setNetwork('home');
    expect(c.preferred).toBe('sstp');
    // A fresh process on the same network (the store keeps it).
    const again = new ProtocolChoice({ order: ['openvpn', 'sstp'], learn: true }, mem, silentLogger());
    again.setNetwork('home');
    expect(again.preferred).toBe('sstp');
    expect(again.reason).toMatch(/^remembered for this network: OpenVPN failed on 3/);
  });

  it('goes back to the configured order when SSTP fails on three nodes while OpenVPN works again', () => {
    const c = new ProtocolChoice({ order: ['openvpn', 'sstp'], learn: true }, null, silentLogger());
    c.record('s', 'sstp', true);
    for (const n of ['a', 'b', 'c']) c.record(n, 'openvpn', false);
    expect(c.preferred).toBe('sstp');
    c.record('d', 'openvpn', true);
    for (const n of ['e', 'f', 'g']) c.record(n, 'sstp', false);
    expect(c.preferred).toBeNull();
    expect(c.reason).toMatch(/SSTP failed on 3 nodes while OpenVPN works again/);
  });

  it('names the protocol this network blocks, keeps it with the lesson, and SE-VPN is remembered like SSTP (a restart behind a filter starts on it)', () => {
    const mem = memory();
    const order = ['openvpn', 'sevpn', 'sstp'] as const;
    const c = new ProtocolChoice({ order: [...order], learn: true }, mem, silentLogger());
    c.setNetwork('filtered');
    expect(c.blocked).toBeNull();
    c.record('s', 'sevpn', true);
    for (const n of ['a', 'b', 'c']) c.record(n, 'openvpn', false);
    expect(c.preferred).toBe('sevpn');
    expect(c.blocked).toBe('openvpn');
    expect(c.reason).toMatch(/OpenVPN failed on 3 different nodes while SE-VPN worked/);
    const again = new ProtocolChoice({ order: [...order], learn: true }, mem, silentLogger());
    again.setNetwork('filtered');
    expect(again.preferred).toBe('sevpn');
    expect(again.blocked).toBe('openvpn');
    expect(again.orderFor('x', [...order])).toEqual(['sevpn', 'openvpn', 'sstp']);
    // Another network: nothing blocked there yet.
    again.setNetwork('home');
    expect(again.blocked).toBeNull();
    // OpenVPN working again puts the configured order back, and nothing is blocked.
    c.record('d', 'openvpn', true);
    for (const n of ['e', 'f', 'g']) c.record(n, 'sevpn', false);
    expect(c.preferred).toBeNull();
    expect(c.blocked).toBeNull();
  });

  it('sends nothing of the protocol a network blocks while its lesson holds: attemptOrder leaves it out, a node of the user keeps its own order, another network has it back (#58)', () => {
    const mem = memory();
    const order = ['openvpn', 'sevpn', 'sstp'] as const;
    const c = new ProtocolChoice(
      { order: [...order], learn: true, nodeOrders: { mine: ['openvpn'] } },
      mem,
      silentLogger(),
    );
    c.setNetwork('filtered');
    expect(c.attemptOrder('x', [...order])).toEqual([...order]);
    c.record('b', 'openvpn', false, { message: 'no answer', network: true });
    c.record('b', 'sevpn', true);
    expect(c.blocked).toBe('openvpn');
    // Shown in this order (Nodes view), attempted without OpenVPN at all.
    expect(c.orderFor('x', [...order])).toEqual(['sevpn', 'openvpn', 'sstp']);
    expect(c.attemptOrder('x', [...order])).toEqual(['sevpn', 'sstp']);
    expect(c.attemptOrder('ovpn-only', ['openvpn'])).toEqual([]);
    expect(c.attemptOrder('mine', [...order])).toEqual(['openvpn']);
    // A restart on the network: the same from the first call on, before anything was tried.
    const again = new ProtocolChoice({ order: [...order], learn: true }, mem, silentLogger());
    again.setNetwork('filtered');
    expect(again.attemptOrder('x', [...order])).toEqual(['sevpn', 'sstp']);
    again.setNetwork('elsewhere');
    expect(again.attemptOrder('x', [...order])).toEqual([...order]);
  });
});
