import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../core/app/index.js';
import { NodeRoutes } from '../../core/app/node-routes.js';
import { silentLogger } from '../../core/common/index.js';
import type { Store } from '../../core/store/index.js';
import { parseVpnGateCsv, staticNodeFromFile } from '../../core/vpngate/index.js';
import { vpnGateCsv, vpnGateProfile } from '../helpers/vpngate-fixtures.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const store = { setting: () => null, setSetting: () => undefined } as unknown as Store;

describe('one address per node: the tunnel dials what the probes probe (#34)', () => {
  const [node] = parseVpnGateCsv(
    vpnGateCsv([{ host: 'public-vpn-1', ip: '203.0.113.1', profile: vpnGateProfile('vpn.example.org', 443, 'tcp') }]),
  ).nodes;

  it('dials a listed node at its row address, whatever name its profile gives', () => {
    const routes = new NodeRoutes(() => buildConfig({}, {}), store, silentLogger());
    expect(routes.hostOf(node!)).toBe('203.0.113.1');
    expect(routes.tunnelRoute(node!)).toEqual({ remoteHost: '203.0.113.1' });
  });

  it('dials its DDNS name with connectBy: hostname, for the probe and the tunnel alike', () => {
    const routes = new NodeRoutes(() => buildConfig({ vpngate: { connectBy: 'hostname' } }, {}), store, silentLogger());
    expect(routes.tunnelRoute(node!)).toEqual({ remoteHost: routes.hostOf(node!) });
    expect(routes.hostOf(node!)).toBe('public-vpn-1.opengw.net');
  });

  it('trusts the user’s own profile as it is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-routes-'));
    writeFileSync(join(dir, 'mine.ovpn'), vpnGateProfile('192.168.1.5', 1194, 'udp'));
    const mine = staticNodeFromFile(join(dir, 'mine.ovpn'));
    const routes = new NodeRoutes(() => buildConfig({}, {}), store, silentLogger());
    expect(routes.tunnelRoute(mine)).toEqual({});
    expect(routes.hostOf(mine)).toBe('192.168.1.5');
  });
});
