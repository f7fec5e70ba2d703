import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  candidateSources,
  DEMOTE_MS,
  directoryUrlOf,
  orderSources,
  parseMirrorDirectory,
  type ListSource,
  type SourceRecord,
} from '../../core/vpngate/index.js';
import { directoryHtml } from '../helpers/list-site.js';
import { refusedAddress } from '../../core/reach/index.js';

describe('the mirror directory page', () => {
  it('reads the mirrors of a page shaped like /en/sites.aspx, and none of its other links', () => {
    const html = directoryHtml([
      { origin: 'http://211.224.153.126:54417', location: 'Korea Republic of' },
      { origin: 'http://fp76f1a976.tkyc303.ap.nuro.jp:17469' },
      { origin: 'http://121.189.102.234:13791' },
    ]);
    expect(parseMirrorDirectory(html, 'https://www.vpngate.net/en/sites.aspx')).toEqual([
      'http://211.224.153.126:54417/api/iphone/',
      'http://fp76f1a976.tkyc303.ap.nuro.jp:17469/api/iphone/',
      'http://121.189.102.234:13791/api/iphone/',
    ]);
  });

  it('decodes entities, takes single-quoted and bare hrefs, drops duplicates, its own site, queries and credentials', () => {
    const html = `
      <a href='http://198.51.100.7:8080/en/'>a</a>
      <A HREF=http://198.51.100.8:9000/>b</A>
      <a href="http&#58;//198.51.100.9:1234/ja/">c</a>
      <a href="http://198.51.100.7:8080/en/">dup</a>
      <a href="http://mirror.example:7777/en/">own site</a>
      <a href="http://198.51.100.10:80/en/?x=1">query</a>
      <a href="http://u:p@198.51.100.11:81/en/">creds</a>
      <a href="http://198.51.100.12/about.aspx">not a root</a>
      <a href="javascript:alert(1)">js</a>
      <a href="ftp://198.51.100.13:21/">ftp</a>`;
    expect(parseMirrorDirectory(html, 'http://mirror.example:7777/en/sites.aspx')).toEqual([
      'http://198.51.100.7:8080/api/iphone/',
      'http://198.51.100.8:9000/api/iphone/',
      'http://198.51.100.9:1234/api/iphone/',
    ]);
  });

  it('leaves out mirrors on this machine, its link or (unless allowed) the LAN (#34)', () => {
    const html = directoryHtml([
      { origin: 'http://127.0.0.1:8080' },
      { origin: 'http://localhost:8080' },
      { origin: 'http://[::1]:8080' },
      { origin: 'http://169.254.169.254:80' },
      { origin: 'http://192.168.1.1:8080' },
      { origin: 'http://198.51.100.7:8080' },
    ]);
    expect(parseMirrorDirectory(html, 'https://www.vpngate.net/en/sites.aspx')).toEqual([
      'http://198.51.100.7:8080/api/iphone/',
    ]);
    expect(
      parseMirrorDirectory(html, 'https://www.vpngate.net/en/sites.aspx', (ip) => refusedAddress(ip, true)),
    ).toEqual(['http://192.168.1.1:8080/api/iphone/', 'http://198.51.100.7:8080/api/iphone/']);
  });

  it('never throws on garbage, and every result is a list URL (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (junk) => {
        for (const url of parseMirrorDirectory(
          `<a href="${junk}">x</a>${junk}`,
          'https://www.vpngate.net/en/sites.aspx',
        )) {
          expect(url).toMatch(/^https?:\/\/[^/]+\/api\/iphone\/$/);
        }
      }),
    );
  });

  it('is found at the origin of a list endpoint', () => {
    expect(directoryUrlOf('https://www.vpngate.net/api/iphone/')).toBe('https://www.vpngate.net/en/sites.aspx');
    expect(directoryUrlOf('http://198.51.100.7:8080/api/iphone/')).toBe('http://198.51.100.7:8080/en/sites.aspx');
    expect(directoryUrlOf('not a url')).toBeNull();
  });
});

describe('the order sources are tried in', () => {
  const now = 10 * DEMOTE_MS;
  const rec = (url: string, kind: SourceRecord['kind'], over: Partial<SourceRecord> = {}): SourceRecord => ({
    url,
    kind,
    foundAt: 0,
    foundFrom: null,
    lastOkAt: null,
    lastFailAt: null,
    lastError: null,
    lastVia: null,
    lastNodes: null,
    ...over,
  });
  const official: ListSource[] = [
    { url: 'https://www.vpngate.net/api/iphone/', kind: 'official' },
    { url: 'http://www.vpngate.net/api/iphone/', kind: 'official' },
  ];
  const urls = (s: ListSource[]): string[] => s.map((x) => x.url);

  it("with nothing remembered: official endpoints as configured, then the user's sources, then mirrors", () => {
    const mirrors = [rec('http://m1:1/api/iphone/', 'mirror'), rec('http://m2:2/api/iphone/', 'mirror')];
    const c = candidateSources(official, ['https://cdn.example/list.csv'], mirrors);
    expect(urls(orderSources(c, new Map(), now))).toEqual([
      ...urls(official),
      'https://cdn.example/list.csv',
      'http://m1:1/api/iphone/',
      'http://m2:2/api/iphone/',
    ]);
  });

  it('puts the source that delivered most recently first (a mirror that worked is used first next start)', () => {
    const m = rec('http://m1:1/api/iphone/', 'mirror', { lastOkAt: now - 1000 });
    const records = new Map([
      [m.url, m],
      [official[0]!.url, rec(official[0]!.url, 'official', { lastOkAt: now - 5000 })],
    ]);
    expect(urls(orderSources(candidateSources(official, [], [m]), records, now))).toEqual([
      m.url,
      official[0]!.url,
      official[1]!.url,
    ]);
  });

  it('demotes a source that failed (junk, a stall) behind the rest for an hour, then lets it back', () => {
    const bad = rec(official[0]!.url, 'official', {
      lastOkAt: now - 2 * DEMOTE_MS,
      lastFailAt: now - 1000,
      lastError: 'the list is an HTML page',
    });
    const records = new Map([[bad.url, bad]]);
    const m = rec('http://m1:1/api/iphone/', 'mirror');
    expect(urls(orderSources(candidateSources(official, [], [m]), records, now))).toEqual([
      official[1]!.url,
      m.url,
      official[0]!.url,
    ]);
    expect(urls(orderSources(candidateSources(official, [], [m]), records, now + DEMOTE_MS))[0]).toBe(official[0]!.url);
  });

  it('lists each URL once, whichever way it was known', () => {
    const c = candidateSources(official, [official[0]!.url], [rec(official[1]!.url, 'mirror')]);
    expect(c).toEqual(official);
  });
});
