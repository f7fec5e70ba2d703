import { describe, expect, it } from 'vitest';
import { pickMemberCandidate } from '../../core/groups/index.js';

const n = (id: string, ip: string) => ({ id, ip });

describe('the next balance member (issue #24: two members on one server)', () => {
  it('never takes a second entry of a server a member is on while another server is free, even a better-scored one', () => {
    // VPN Gate lists one server as UDP and TCP: the TCP entry ranks right after the member's UDP one.
    const member = n('srv-a-udp', '10.1.0.5');
    const ranked = [n('srv-a-tcp', '10.1.0.5'), n('srv-b', '10.1.0.6')];
    expect(pickMemberCandidate(ranked, [member])?.id).toBe('srv-b');
  });

  it('prefers another /16 among the other servers, then the best score', () => {
    const member = n('m', '198.51.1.1');
    expect(pickMemberCandidate([n('same-net', '198.51.2.2'), n('other-net', '203.0.113.9')], [member])?.id).toBe(
      'other-net',
    );
    expect(pickMemberCandidate([n('first', '198.51.2.2'), n('second', '198.51.3.3')], [member])?.id).toBe('first');
  });

  it('takes the same server only when nothing else is left, and nothing from an empty ranking', () => {
    expect(pickMemberCandidate([n('srv-a-tcp', '10.1.0.5')], [n('srv-a-udp', '10.1.0.5')])?.id).toBe('srv-a-tcp');
    expect(pickMemberCandidate([], [n('m', '10.1.0.5')])).toBeNull();
  });
});
