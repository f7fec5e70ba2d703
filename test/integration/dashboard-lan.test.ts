/**
 * The dashboard on a home server (#62): `--admin 0.0.0.0:PORT` in one namespace (the server), a
 * browser's requests from another joined to it by a veth (a phone on the LAN). The link the core
 * prints for the network opens as printed; a name the user did not list is still refused (the
 * DNS-rebinding defence), and one listed in adminHosts is taken.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRoot, lanPair, type NetNs, waitForLine } from '../helpers/netns.js';

const BIN = resolve(import.meta.dirname, '../../bin/gatehop.js');

describe.skipIf(!isRoot)('the dashboard from another device of the network', () => {
  let server: NetNs;
  let phone: NetNs;
  let lanLink = '';
  let token = '';
  let port = 0;
  const subnet = `10.${100 + (process.pid % 100)}.${Math.floor(Math.random() * 250)}`;

  beforeAll(async () => {
    ({ a: server, b: phone } = lanPair(subnet));
    const dir = mkdtempSync(join(tmpdir(), 'gh-lan-ui-'));
    const config = join(dir, 'gatehop.yaml');
    writeFileSync(config, 'adminHosts: [homeserver.lan]\n');
    const core = server.spawn([
      process.execPath,
      BIN,
      '--config',
      config,
      '--egress',
      'direct',
      '--listen',
      '127.0.0.1:0',
      '--admin',
      '0.0.0.0:0',
      '--data-dir',
      dir,
      '--log-file',
      'off',
      '--log-level',
      'warn',
    ]);
    lanLink = (await waitForLine(core, /^dashboard from your network: /, 30_000)).replace(
      /^dashboard from your network: /,
      '',
    );
    const url = new URL(lanLink);
    token = decodeURIComponent(url.hash.replace(/^#token=/, ''));
    port = Number(url.port);
  }, 60_000);

  afterAll(() => {
    server?.close();
    phone?.close();
  });

  const fromPhone = (args: string[]): { code: string; body: string } => {
    const out = phone.exec(['curl', '-sS', '--max-time', '10', '-w', '\n%{http_code}', ...args]);
    const at = out.lastIndexOf('\n');
    return { body: out.slice(0, at), code: out.slice(at + 1) };
  };

  it("prints a link by the server's LAN address, and the phone opens the dashboard and the API by it", () => {
    expect(lanLink).toMatch(new RegExp(`^http://${subnet.replace(/\./g, '\\.')}\\.1:\\d+/ui/#token=`));
    const page = fromPhone([lanLink.replace(/#.*/, '')]);
    expect(page.code).toBe('200');
    expect(page.body).toMatch(/<html/i);
    const status = fromPhone(['-H', `Authorization: Bearer ${token}`, `http://${subnet}.1:${port}/status`]);
    expect(status.code).toBe('200');
    expect(JSON.parse(status.body)).toHaveProperty('version');
  });

  it('still refuses a name nobody listed (DNS rebinding), takes one listed in adminHosts, and wants the token', () => {
    const auth = ['-H', `Authorization: Bearer ${token}`];
    const rebound = fromPhone([...auth, '-H', `Host: evil.example:${port}`, `http://${subnet}.1:${port}/status`]);
    expect(rebound.code).toBe('403');
    expect(JSON.parse(rebound.body)).toMatchObject({ error: 'GH_ERR_API_HOST' });
    const named = fromPhone([
      ...auth,
      '--resolve',
      `homeserver.lan:${port}:${subnet}.1`,
      `http://homeserver.lan:${port}/status`,
    ]);
    expect(named.code).toBe('200');
    expect(fromPhone([`http://${subnet}.1:${port}/status`]).code).toBe('401');
  });

  it('never lets a device of the network start programs through the API', () => {
    const run = fromPhone([
      '-H',
      `Authorization: Bearer ${token}`,
      '-H',
      'Content-Type: application/json',
      '-d',
      '{"command":["true"]}',
      `http://${subnet}.1:${port}/capture/run`,
    ]);
    expect(run.code).toBe('403');
  });
});
