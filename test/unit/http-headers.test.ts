import { describe, expect, it } from 'vitest';
import { parseAuthority, parseBasicAuth, stripHopByHop } from '../../core/proxy/index.js';

describe('HTTP proxy header handling', () => {
  it('drops hop-by-hop fields and those the Connection header names, keeping order and case', () => {
    const raw = [
      'Host',
      'a',
      'Connection',
      'keep-alive, X-Secret',
      'X-Secret',
      '1',
      'Proxy-Authorization',
      'Basic x',
      'Keep-Alive',
      '5',
      'X-Kept',
      'yes',
      'TE',
      'trailers',
    ];
    expect(stripHopByHop(raw)).toEqual(['Host', 'a', 'X-Kept', 'yes']);
  });

  it('keeps fields it is told to keep (Upgrade requests)', () => {
    expect(
      stripHopByHop(['Connection', 'Upgrade', 'Upgrade', 'websocket'], new Set(['connection', 'upgrade'])),
    ).toEqual(['Connection', 'Upgrade', 'Upgrade', 'websocket']);
  });

  it('decodes Basic credentials whose password contains a colon', () => {
    const v = `Basic ${Buffer.from('u:p:w').toString('base64')}`;
    expect(parseBasicAuth(v)).toEqual({ username: 'u', password: 'p:w' });
    expect(parseBasicAuth('Bearer x')).toBeNull();
    expect(parseBasicAuth(`Basic ${Buffer.from('nocolon').toString('base64')}`)).toBeNull();
  });

  it('parses CONNECT authorities, bracketed IPv6 included, and rejects junk', () => {
    expect(parseAuthority('example.test:443')).toEqual({ host: 'example.test', port: 443 });
    expect(parseAuthority('[::1]:8443')).toEqual({ host: '::1', port: 8443 });
    expect(parseAuthority('host:0')).toBeNull();
    expect(parseAuthority('host:99999')).toBeNull();
    expect(parseAuthority('/path')).toBeNull();
  });
});
