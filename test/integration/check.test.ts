/**
 * `gatehop check` (issue #15): every problem of the config, the --ovpn profiles and the cached
 * list, each with where it is, and exit 1; exit 0 when all is well. Nothing is bound or probed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { Store } from '../../core/store/index.js';
import { vpnGateProfile } from '../helpers/vpngate-fixtures.js';

const BIN = resolve(__dirname, '../../bin/gatehop.js');

function check(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const c = spawn(process.execPath, [BIN, 'check', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.stderr.on('data', (b: Buffer) => (err += b.toString()));
    c.on('exit', (code) => res({ code, out, err }));
  });
}

describe('gatehop check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gh-check-'));
  const dataDir = join(dir, 'data');

  it('exits 0 for a good config and profile, saying so', async () => {
    const cfg = join(dir, 'good.yaml');
    writeFileSync(cfg, 'listen: 127.0.0.1:1081\ngroups:\n  mode: manual\n');
    const ovpn = join(dir, 'node.ovpn');
    writeFileSync(ovpn, vpnGateProfile('192.0.2.1', 443, 'tcp'));
    const r = await check(['--config', cfg, '--ovpn', ovpn, '--data-dir', dataDir]);
    expect(r).toMatchObject({ code: 0, out: expect.stringMatching(/are fine/) });
  });

  it('lists the list sources a start would try, with how each last went (issue #20)', async () => {
    const d = join(dir, 'data-sources');
    const store = new Store({ path: join(d, 'gatehop.db'), logger: silentLogger() });
    store.saveListSource({
      url: 'http://203.0.113.9:1234/api/iphone/',
      kind: 'mirror',
      foundAt: 1,
      foundFrom: 'https://www.vpngate.net/en/sites.aspx',
      lastOkAt: Date.UTC(2026, 10, 30),
      lastFailAt: null,
      lastError: null,
      lastVia: 'tunnel',
      lastNodes: 91,
    });
    store.saveListSource({
      url: 'https://www.vpngate.net/api/iphone/',
      kind: 'official',
      foundAt: 1,
      foundFrom: null,
      lastOkAt: null,
      lastFailAt: Date.UTC(2026, 10, 30),
      lastError: 'fetch https://www.vpngate.net/api/iphone/: timed out',
      lastVia: 'direct',
      lastNodes: null,
    });
    store.close();
    const r = await check(['--data-dir', d, '--list-source', 'https://cdn.example/vpngate.csv']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('list sources (4):');
    expect(r.out).toContain(
      'official https://www.vpngate.net/api/iphone/: failed 2026-11-30T00:00:00.000Z (direct): fetch https://www.vpngate.net/api/iphone/: timed out',
    );
    expect(r.out).toContain('official http://www.vpngate.net/api/iphone/: not tried yet');
    expect(r.out).toContain('user     https://cdn.example/vpngate.csv: not tried yet');
    expect(r.out).toContain(
      'mirror   http://203.0.113.9:1234/api/iphone/: ok 2026-11-30T00:00:00.000Z (tunnel, 91 nodes)',
    );
  });

  it('names every problem with its file, key and line, and exits 1', async () => {
    const cfg = join(dir, 'bad.yaml');
    writeFileSync(
      cfg,
      [
        'listen: 127.0.0.1:1080',
        'lisen: 127.0.0.1:1',
        'groups:',
        '  mode: sometimes',
        '  urlTest:',
        '    intervalMs: 5',
        '',
      ].join('\n'),
    );
    const r = await check(['--config', cfg, '--data-dir', dataDir, '--listen', 'nope']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`${cfg}:2: .*lisen`));
    expect(r.err).toMatch(new RegExp(`${cfg}:4 groups\\.mode: `));
    expect(r.err).toMatch(new RegExp(`${cfg}:6 groups\\.urlTest\\.intervalMs: `));
    expect(r.err).toMatch(/command line listen: must be HOST:PORT/);
    expect(r.err).toMatch(/gatehop check: 4 problems/);
  });

  it("checks a node's own protocol order at its line, and takes --node-ca as --sstp-ca before it (#35)", async () => {
    const cfg = join(dir, 'node-protocols.yaml');
    writeFileSync(cfg, ['tunnel:', '  nodeProtocols:', '    public-vpn-1: [sevpn, ftp]', ''].join('\n'));
    const bad = await check(['--config', cfg, '--data-dir', dataDir]);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(new RegExp(`${cfg}:3 tunnel\\.nodeProtocols\\.public-vpn-1\\.1: `));
    writeFileSync(cfg, ['tunnel:', '  nodeProtocols:', '    public-vpn-1: [sevpn, sstp]', ''].join('\n'));
    for (const flag of ['--node-ca', '--sstp-ca'])
      expect(await check(['--config', cfg, '--data-dir', dataDir, flag, cfg])).toMatchObject({ code: 0 });
  });

  it('takes --upstream-nodes always|fallback|never with --upstream, and says what is wrong otherwise (#35)', async () => {
    const up = ['--data-dir', dataDir, '--upstream', 'socks5://127.0.0.1:1'];
    for (const when of ['always', 'fallback', 'never'])
      expect(await check([...up, '--upstream-nodes', when])).toMatchObject({ code: 0 });
    const bad = await check([...up, '--upstream-nodes', 'sometimes']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/--upstream-nodes.*must be always, fallback or never/);
    const alone = await check(['--data-dir', dataDir, '--upstream-nodes', 'fallback']);
    expect(alone.code).toBe(2);
    expect(alone.err).toMatch(/--upstream-nodes goes with --upstream/);
  });

  it('reports YAML that does not parse at its line', async () => {
    const cfg = join(dir, 'broken.yaml');
    writeFileSync(cfg, 'listen: 127.0.0.1:1080\ngroups: [unclosed\n');
    const r = await check(['--config', cfg, '--data-dir', dataDir]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(new RegExp(`${cfg}:\\d+: not valid YAML`));
  });

  it('reports an --ovpn file that is not a profile, and a cached list whose node profiles are broken', async () => {
    const bad = join(dir, 'bad.ovpn');
    writeFileSync(bad, 'this is not\nan openvpn profile\n');
    const d2 = join(dir, 'data2');
    const store = new Store({ path: join(d2, 'gatehop.db'), logger: silentLogger() });
    store.saveNodeList({ fetchedAt: 1, source: 'test', nodes: [{ id: 'public-vpn-9', profile: 'garbage' }] });
    store.close();
    const r = await check(['--ovpn', bad, '--data-dir', d2]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${bad}: not a usable OpenVPN profile`);
    expect(r.err).toMatch(/gatehop\.db \(cached list\) public-vpn-9: its profile is not usable/);
  });

  it('reports a database file that cannot be read, without touching it', async () => {
    const d3 = join(dir, 'data3');
    const { mkdirSync, readFileSync } = await import('node:fs');
    mkdirSync(d3);
    writeFileSync(join(d3, 'gatehop.db'), 'not sqlite at all');
    const r = await check(['--data-dir', d3]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/gatehop\.db: the cached list cannot be read/);
    expect(readFileSync(join(d3, 'gatehop.db'), 'utf8')).toBe('not sqlite at all');
  });
});
