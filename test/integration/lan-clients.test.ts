/**
 * Who may use a proxy that listens on the LAN (#63, proxy.allowFrom): the proxy in one namespace
 * (the home computer), a "phone" in another joined to it by a veth. From the phone's address on
 * that network, with the password, the proxy carries its request; from an address outside this
 * computer's networks (the phone's second address, routed back through it, as a port forwarded
 * from the Internet would arrive), the connection is refused before a byte of it is read, password
 * or not, and the log says so once.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertAuthFile } from '../../core/proxy/index.js';
import { isRoot, lanPair, type NetNs, waitForLine } from '../helpers/netns.js';
import { until } from '../helpers/fds.js';

const BIN = resolve(import.meta.dirname, '../../bin/gatehop.js');

describe.skipIf(!isRoot)('proxy.allowFrom: a LAN proxy refuses who is not on its networks, unheard', () => {
  let home: NetNs;
  let phone: NetNs;
  let dir = '';
  let phoneDev = '';
  const lan = `10.${140 + (process.pid % 50)}.${Math.floor(Math.random() * 250)}`;
  const far = `10.${190 + (process.pid % 50)}.${Math.floor(Math.random() * 250)}`;

  beforeAll(async () => {
    ({ a: home, b: phone, bDev: phoneDev } = lanPair(lan));
    // The far address is reachable from home only through the phone: not one of home's networks.
    home.exec(['ip', 'route', 'add', `${far}.0/24`, 'via', `${lan}.2`]);
    phone.exec(['ip', 'addr', 'add', `${far}.2/32`, 'dev', phoneDev]);
    // What the phone asks for through the proxy: a page on the LAN (home's DIRECT egress reaches it).
    const site = phone.spawn(['python3', '-u', '-m', 'http.server', '8080', '--bind', `${lan}.2`]);
    await waitForLine(site, /Serving HTTP/, 10_000);
    dir = mkdtempSync(join(tmpdir(), 'gh-lan-clients-'));
    upsertAuthFile(join(dir, 'users'), 'phone', 'secret-pass');
    const core = home.spawn([
      process.execPath,
      BIN,
      '--egress',
      'direct',
      '--listen',
      '0.0.0.0:1080',
      '--auth-file',
      join(dir, 'users'),
      '--admin',
      'off',
      '--data-dir',
      dir,
      '--log-file',
      join(dir, 'gatehop.log'),
      '--log-level',
      'info',
    ]);
    await waitForLine(core, /^gatehop ready: /, 30_000);
  }, 60_000);

  afterAll(() => {
    home?.close();
    phone?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const fromPhone = (args: string[]) =>
    spawnSync('ip', ['netns', 'exec', phone.name, 'curl', '-sS', '--max-time', '10', ...args], { encoding: 'utf8' });

  it("carries the phone's request from its address on the LAN, with the password", () => {
    const r = fromPhone(['-x', `socks5h://phone:secret-pass@${lan}.1:1080`, `http://${lan}.2:8080/`]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Directory listing/);
    const http = fromPhone(['-x', `http://phone:secret-pass@${lan}.1:1080`, `http://${lan}.2:8080/`]);
    expect(http.status, http.stderr).toBe(0);
  });

  it('refuses the same phone from an address outside its networks before reading a byte, password or not', async () => {
    for (const proxy of [`socks5h://phone:secret-pass@${lan}.1:1080`, `http://phone:secret-pass@${lan}.1:1080`]) {
      const r = fromPhone(['--interface', `${far}.2`, '-x', proxy, `http://${lan}.2:8080/`]);
      // Reset as it connected (7), or on its first read (56), an empty reply (52), a SOCKS handshake
      // that got nothing (97): whichever curl saw first, no method choice and no HTTP status came.
      expect([7, 52, 56, 97], r.stderr).toContain(r.status);
    }
    // The log is written off the main thread: the line comes within a moment.
    const refusalsNow = (): string[] =>
      readFileSync(join(dir, 'current.log'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"event":"client-refused"'));
    await until(
      () => (refusalsNow().length > 0 ? true : undefined),
      5_000,
      () => 'the client-refused log line',
    );
    const refusals = refusalsNow();
    expect(refusals).toHaveLength(1); // said once a minute, not per connection
    expect(refusals[0]).toContain(`${far}.2`);
  });
});
