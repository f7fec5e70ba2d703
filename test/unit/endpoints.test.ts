import { describe, expect, it } from 'vitest';
import { bracketed, hostPort, unbracket } from '../../core/common/index.js';

describe('IPv6 literals in host text: one helper each way', () => {
  it('brackets an IPv6 literal once, and leaves names and IPv4 as they are', () => {
    expect(bracketed('::1')).toBe('[::1]');
    expect(bracketed('[::1]')).toBe('[::1]');
    expect(bracketed('fe80::1%eth0')).toBe('[fe80::1%eth0]');
    expect(bracketed('127.0.0.1')).toBe('127.0.0.1');
    expect(bracketed('example.com')).toBe('example.com');
  });

  it('writes host:port with IPv6 in brackets, and unbracket undoes it', () => {
    expect(hostPort('::1', 1080)).toBe('[::1]:1080');
    expect(hostPort('10.0.0.1', 80)).toBe('10.0.0.1:80');
    expect(unbracket(bracketed('2001:db8::2'))).toBe('2001:db8::2');
  });
});
