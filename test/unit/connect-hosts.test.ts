import { describe, expect, it } from 'vitest';
import { ErrorCodes, GatehopError } from '../../core/common/index.js';
import {
  ConnectHosts,
  countsAgainstNode,
  GAVE_UP_COUNTS_AFTER_MS,
  isNameFailure,
  MAX_HOSTS,
} from '../../core/egress/connect-hosts.js';

describe('the distinct places connects reached and failed to reach, per health window (#60)', () => {
  it('counts places, not tries; a take starts over', () => {
    const c = new ConnectHosts();
    for (let i = 0; i < 5; i++) c.failed('Down.Example', new Error('timeout'));
    c.failed('a.example', new GatehopError(ErrorCodes.DNS_TIMEOUT, 'no answer from 10.211.254.254'));
    c.ok('b.example');
    expect(c.take()).toEqual({ ok: 1, failed: 2, failedNames: 1 });
    expect(c.take()).toEqual({ ok: 0, failed: 0, failedNames: 0 });
  });

  it('a name fails at the resolver when it is silent or answers SERVFAIL; NXDOMAIN is an answer', () => {
    expect(isNameFailure(new GatehopError(ErrorCodes.DNS_TIMEOUT, 'x'))).toBe(true);
    expect(isNameFailure(new GatehopError(ErrorCodes.EGRESS_FAILED, 'resolve x: 10.0.0.1 answered SERVFAIL'))).toBe(
      true,
    );
    expect(isNameFailure(new GatehopError(ErrorCodes.EGRESS_DNS_NOT_FOUND, 'x: no such host'))).toBe(false);
    expect(isNameFailure(new Error('DNS timeout'))).toBe(false);
  });

  it('a client that gave up at once says nothing about the node; one that waited seconds for a connect does', () => {
    expect(countsAgainstNode(false, 1_000, 1_001)).toBe(true);
    expect(countsAgainstNode(true, 1_000, 1_200)).toBe(false);
    expect(countsAgainstNode(true, 1_000, 1_000 + GAVE_UP_COUNTS_AFTER_MS)).toBe(true);
  });

  it('is bounded: past MAX_HOSTS places a set stops growing', () => {
    const c = new ConnectHosts();
    for (let i = 0; i < MAX_HOSTS * 3; i++) c.failed(`h${i}.example`, null);
    expect(c.take().failed).toBe(MAX_HOSTS);
  });
});
