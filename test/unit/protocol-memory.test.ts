import { describe, expect, it } from 'vitest';
import { protocolMemoryOf } from '../../core/app/protocol-memory.js';
import { silentLogger } from '../../core/common/index.js';
import { ProtocolChoice } from '../../core/groups/index.js';
import { Store } from '../../core/store/index.js';

describe('what a network taught, in the real SQLite store (#35)', () => {
  it('keeps an SE-VPN lesson and the protocol blocked across a restart; a damaged or unknown value is forgotten, not fatal', () => {
    const store = new Store({ path: ':memory:', logger: silentLogger() });
    const order = ['openvpn', 'sevpn', 'sstp'] as const;
    const first = new ProtocolChoice({ order: [...order], learn: true }, protocolMemoryOf(store), silentLogger());
    first.setNetwork('net-a');
    first.record('s', 'sevpn', true);
    for (const n of ['a', 'b', 'c']) first.record(n, 'openvpn', false);
    expect(first.preferred).toBe('sevpn');
    // The next start on this network: SE-VPN first, OpenVPN known blocked.
    const next = new ProtocolChoice({ order: [...order], learn: true }, protocolMemoryOf(store), silentLogger());
    next.setNetwork('net-a');
    expect(next.preferred).toBe('sevpn');
    expect(next.blocked).toBe('openvpn');
    // What an older version saved (no `blocked`) still loads; a damaged row or a protocol unknown here is dropped.
    const memory = protocolMemoryOf(store);
    store.setSetting('protocol-preference net-b', JSON.stringify({ preferred: 'sstp', reason: 'old' }));
    expect(memory.load('net-b')).toEqual({ preferred: 'sstp', reason: 'old' });
    store.setSetting('protocol-preference net-c', '{"preferred":');
    expect(memory.load('net-c')).toBeNull();
    store.setSetting('protocol-preference net-d', JSON.stringify({ preferred: 'wireguard', reason: 'x' }));
    expect(memory.load('net-d')).toBeNull();
    store.close();
  });
});
