import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../core/app/index.js';
import { RoutingState } from '../../core/router/index.js';
import { silentLogger } from '../../core/common/index.js';
import { AsnDb, GeoIp } from '../../core/rules/index.js';
import { until } from '../helpers/fds.js';

describe('IP-ASN and GEOIP on their real data (@ip-location-db, #45)', () => {
  it('knows the AS of well-known public addresses, v4 and v6, and none for private ones', async () => {
    const db = await AsnDb.load();
    expect(db.ranges).toBeGreaterThan(100_000);
    expect(db.asn('1.1.1.1')).toBe(13335); // Cloudflare
    expect(db.asn('8.8.8.8')).toBe(15169); // Google
    expect(db.asn('2606:4700:4700::1111')).toBe(13335);
    expect(db.asn('10.1.2.3')).toBeNull();
    expect(db.asn('127.0.0.1')).toBeNull();
  }, 60_000);

  it('GeoIP on the same range-table loader: countries of known addresses, none for private ones', async () => {
    const g = await GeoIp.load();
    expect(g.ranges).toBeGreaterThan(400_000);
    expect(g.country('8.8.8.8')).toBe('US');
    expect(g.country('5.160.0.1')).toBe('IR');
    expect(g.country('114.114.114.114')).toBe('CN');
    expect(g.country('2001:4860:4860::8888')).toBe('US');
    expect(g.country('10.0.0.1')).toBeNull();
  }, 60_000);

  it('is loaded only when a rule names an AS, then the table routes by it', async () => {
    const config = (rules: string[]) =>
      buildConfig(
        { mode: 'rule', rules },
        { egress: 'direct', dataDir: mkdtempSync(join(tmpdir(), 'gh-asn-')), logFile: 'off' },
      );
    const without = new RoutingState(config(['MATCH,DIRECT']), silentLogger(), () => []);
    without.start();
    expect(without.status().asn).toBeNull();
    without.close();
    const routing = new RoutingState(
      config(['IP-ASN,13335,REJECT,no-resolve', 'MATCH,DIRECT']),
      silentLogger(),
      () => [],
    );
    try {
      routing.start();
      await until(() => routing.status().asn?.loaded || undefined, 60_000, 'the ASN data loaded');
      expect(routing.table().decide({ network: 'tcp', host: '1.1.1.1', port: 443 })).toMatchObject({
        decision: { target: 'REJECT', rule: 'IP-ASN', payload: '13335' },
      });
      expect(routing.table().decide({ network: 'tcp', host: '8.8.8.8', port: 443 })).toMatchObject({
        decision: { target: 'DIRECT' },
      });
    } finally {
      routing.close();
    }
  }, 90_000);
});
