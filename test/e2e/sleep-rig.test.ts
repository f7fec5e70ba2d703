/**
 * A laptop's sleep, as the core sees it: its process stopped (SIGSTOP), then resumed. Time the core
 * itself did not run says nothing of its servers: a short sleep changes nothing, and after a long
 * one no worker is killed as hung (its heartbeats were only queued). A server drops a client
 * silent past its ping-restart, so after a long sleep the tunnels reconnect; a request still
 * works within seconds of the resume. Found by the soak (issue #24).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusSchema, type Status } from '../../core/api/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { curl } from '../helpers/curl.js';
import { isRoot } from '../helpers/netns.js';
import { freePort } from '../helpers/ports.js';
import { socksGet } from '../helpers/socks-http.js';
import { Rig } from '../rig/rig.js';
import { readLogFile } from '../helpers/log-file.js';

const TOKEN = 'sleep-rig-token-0123456789abcdef';

describe.skipIf(!isRoot)('sleep and resume of the core (issue #24)', () => {
  let rig: Rig;
  let core: ChildProcess;
  let adminPort = 0;
  let proxyPort = 0;
  let logFile = '';
  const status = async (): Promise<Status> =>
    statusSchema.parse((await apiRequest(adminPort, 'GET', '/status', { token: TOKEN })).json());

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 3, bigMib: 2 });
    const dir = mkdtempSync(join(tmpdir(), 'gh-sleep-'));
    writeFileSync(
      join(dir, 'gatehop.yaml'),
      [
        'switching:',
        '  healthDnsName: files.test',
        'groups:',
        '  balance: { tunnels: 2 }',
        '  urlTest:',
        `    url: ${rig.url('/generate_204')}`,
        '    intervalMs: 600000',
      ].join('\n'),
    );
    [adminPort, proxyPort] = [await freePort(), await freePort()];
    core = spawn(
      process.execPath,
      [
        resolve(import.meta.dirname, '../../bin/gatehop.js'),
        '--egress',
        'vpngate',
        '--api',
        rig.state.apiUrl,
        '--allow-private-nodes',
        '--mode',
        'global',
        '--listen',
        `127.0.0.1:${proxyPort}`,
        '--admin',
        `127.0.0.1:${adminPort}`,
        '--admin-token',
        TOKEN,
        '--data-dir',
        dir,
        '--config',
        join(dir, 'gatehop.yaml'),
        '--log-file',
        join(dir, 'core.log'),
      ],
      { stdio: 'ignore' },
    );
    logFile = join(dir, 'core.log');
    for (let i = 0; i < 240; i++) {
      const s = await status().catch(() => null);
      if (s && s.members.length === 2 && s.switches.inProgress === null) return;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error('the core did not bring up two tunnels');
  }, 240_000);

  afterAll(() => {
    core?.kill('SIGKILL');
    rig?.down();
  });

  const stopFor = async (ms: number): Promise<number> => {
    core.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, ms));
    core.kill('SIGCONT');
    return Date.now();
  };
  const logSince = (ms: number) =>
    readLogFile(logFile)
      .split('\n')
      .filter((l) => l && Date.parse(JSON.parse(l).time) > ms)
      .map((l) => JSON.parse(l).msg as string);

  it('a 5.5 s sleep, shorter than the servers keep a silent client: nothing called dead, no switch, the download across it intact', async () => {
    const before = await status();
    // Paced by the server (2 MiB at 200 KiB/s), so the bytes still cross the tunnel after the sleep
    // (a curl-side limit lets the proxy's socket buffers hold the file before it).
    const download = curl([
      '-s',
      '--max-time',
      '120',
      '--socks5-hostname',
      `127.0.0.1:${proxyPort}`,
      `http://${rig.state.inetAddress}/big?rate=204800`,
    ]);
    await new Promise((r) => setTimeout(r, 2_000));
    const resumed = await stopFor(5_500);
    const r = await socksGet(proxyPort, 'files.test', '/bytes/1000', 10_000);
    expect(r.body.length).toBe(1000);
    // Past the liveness limit (6 s) from the resume: the old rule measured 5.5 s asleep + the
    // time since the last packet (over 6 s) and called the tunnels silent.
    await new Promise((r) => setTimeout(r, 7_000));
    const after = await status();
    expect(after.switches.total - before.switches.total, logSince(resumed - 1_000).join('\n')).toBe(0);
    expect(after.members.map((m) => [m.nodeId, m.down])).toEqual(before.members.map((m) => [m.nodeId, false]));
    const d = await download;
    expect(d.code).toBe(0);
    expect(d.stdout.length).toBe(rig.state.bigBytes);
  }, 120_000);

  it('a 12 s sleep, past the worker watchdog: no worker killed as hung; the servers dropped us meanwhile, so the tunnels reconnect and a request works again', async () => {
    const before = await status();
    const resumed = await stopFor(12_000);
    const r = await socksGet(proxyPort, 'files.test', '/bytes/1000', 10_000).catch((err: Error) => {
      throw new Error(`${err.message}; the core said since the resume:\n${logSince(resumed - 1_000).join('\n')}`);
    });
    expect(r.body.length).toBe(1000);
    await new Promise((r) => setTimeout(r, 12_000));
    const after = await status();
    expect(after.tunnelWorkers.failures, logSince(resumed - 1_000).join('\n')).toBe(before.tunnelWorkers.failures);
    expect(logSince(resumed - 1_000).filter((l) => /heartbeat/.test(l))).toEqual([]);
    expect(after.members).toHaveLength(2);
  }, 120_000);
});
