import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SocksClient } from 'socks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curl } from '../helpers/curl.js';
import { until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { Rig } from '../rig/rig.js';
import { readLogLines } from '../helpers/log-file.js';

const BIN = resolve(import.meta.dirname, '../../bin/gatehop.js');

function logLines(file: string): Array<Record<string, unknown>> {
  return readLogLines(file);
}

describe.skipIf(!isRoot)('gatehop --egress vpngate end to end on the rig', () => {
  let rig: Rig;
  let child: ChildProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-e2e-'));
  const logFile = join(dataDir, 'gatehop.log');
  let port = 0;

  beforeAll(async () => {
    rig = await Rig.up({ nodes: 2, openvpn: ['gcm-udp'], bigMib: 16 });
    child = spawn(
      process.execPath,
      [
        BIN,
        '--egress',
        'vpngate',
        '--api',
        rig.state.apiUrl,
        '--allow-private-nodes',
        '--mode',
        'global',
        '--listen',
        '127.0.0.1:0',
        '--admin',
        'off',
        '--data-dir',
        dataDir,
        '--log-file',
        logFile,
        '--log-level',
        'info',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    await until(() => /socks5\+http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1], 30_000, 'startup line').then(
      (p) => (port = Number(p)),
    );
  }, 240_000);

  afterAll(() => {
    child?.kill('SIGKILL');
    rig?.down();
  });

  const activeNode = (): string | undefined =>
    logLines(logFile)
      .filter((l) => l.event === 'tunnel-active')
      .at(-1)?.nodeId as string | undefined;

  it('brings a tunnel up to the best node and serves SOCKS5 with names resolved inside the tunnel', async () => {
    const nodeId = await until(activeNode, 60_000, 'a tunnel');
    const exit = rig.state.nodes.find((n) => n.name === nodeId)!.exitAddress;
    const r = await curl(['--socks5-hostname', `127.0.0.1:${port}`, 'http://files.test/ip']);
    expect(r.stderr).toBe('');
    expect(r.stdout.toString()).toBe(exit);
  }, 90_000);

  it('serves the HTTP proxy: the large file arrives intact through the tunnel', async () => {
    const r = await curl(['-x', `http://127.0.0.1:${port}`, 'http://files.test/big'], undefined);
    expect(r.stdout.length).toBe(rig.state.bigBytes);
    expect(createHash('sha256').update(r.stdout).digest('hex')).toBe(rig.state.bigSha256);
  }, 90_000);

  it('relays UDP (SOCKS5 UDP ASSOCIATE) through the tunnel to the rig echo service', async () => {
    const client = createSocket('udp4');
    await new Promise<void>((r) => client.bind(0, '127.0.0.1', () => r()));
    const socks = new SocksClient({
      proxy: { host: '127.0.0.1', port, type: 5 },
      command: 'associate',
      destination: { host: '127.0.0.1', port: client.address().port },
    });
    const established = once(socks, 'established');
    socks.connect();
    const [info] = (await established) as [
      { socket: import('node:net').Socket; remoteHost: { host: string; port: number } },
    ];
    const answer = once(client, 'message');
    client.send(
      SocksClient.createUDPFrame({
        remoteHost: { host: rig.state.inetAddress, port: 7 },
        data: Buffer.from('through the tunnel'),
      }),
      info.remoteHost.port,
      info.remoteHost.host,
    );
    const [msg] = (await Promise.race([
      answer,
      new Promise((_, rej) => setTimeout(() => rej(new Error('no UDP echo')), 10_000)),
    ])) as [Buffer];
    expect(SocksClient.parseUDPFrame(msg).data.toString()).toBe('through the tunnel');
    info.socket.destroy();
    client.close();
  }, 30_000);

  it('SIGHUP during a download reloads the config (a second tunnel comes up) and the download arrives intact (#15)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-e2e-hup-'));
    const cfg = join(dir, 'gatehop.yaml');
    const log = join(dir, 'gatehop.log');
    writeFileSync(cfg, 'groups:\n  balance:\n    tunnels: 1\n');
    const c = spawn(
      process.execPath,
      [
        BIN,
        '--config',
        cfg,
        '--egress',
        'vpngate',
        '--api',
        rig.state.apiUrl,
        '--allow-private-nodes',
        '--mode',
        'global',
        '--listen',
        '127.0.0.1:0',
        '--admin',
        'off',
        '--data-dir',
        dir,
        '--log-file',
        log,
        '--log-level',
        'info',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let out = '';
      c.stdout!.on('data', (b: Buffer) => (out += b.toString()));
      const p = Number(await until(() => /socks5\+http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1], 30_000, 'startup line'));
      await until(() => logLines(log).find((l) => l.event === 'tunnel-active'), 60_000, 'a tunnel');
      const { socket } = await SocksClient.createConnection({
        proxy: { host: '127.0.0.1', port: p, type: 5 },
        command: 'connect',
        destination: { host: 'files.test', port: 80 },
      });
      const hash = createHash('sha256');
      let head = Buffer.alloc(0);
      let headDone = false;
      let bytes = 0;
      let paused = false;
      const ended = new Promise<void>((r) => socket.once('end', () => r()));
      socket.on('data', (b: Buffer) => {
        if (!headDone) {
          // Until the end of the HTTP head; the body is hashed from there.
          head = Buffer.concat([head, b]);
          const at = head.indexOf('\r\n\r\n');
          if (at < 0) return;
          headDone = true;
          b = head.subarray(at + 4);
        }
        bytes += b.length;
        hash.update(b);
        // Hold the download open across the reload: it must span it, however fast the rig is.
        if (!paused && bytes > 1 << 20) {
          paused = true;
          socket.pause();
        }
      });
      socket.write('GET /big HTTP/1.0\r\nHost: files.test\r\n\r\n');
      await until(() => (paused ? true : undefined), 30_000, 'a first MiB');
      writeFileSync(cfg, 'groups:\n  balance:\n    tunnels: 2\n');
      c.kill('SIGHUP');
      await until(
        () => (/gatehop reloaded: groups/.test(out) ? true : undefined),
        20_000,
        () => `the reload line (stdout: ${out})`,
      );
      await until(() => logLines(log).find((l) => l.event === 'member-up'), 60_000, 'a second tunnel after the reload');
      socket.resume();
      await ended;
      expect(bytes).toBe(rig.state.bigBytes);
      expect(hash.digest('hex')).toBe(rig.state.bigSha256);
      expect(c.exitCode).toBeNull(); // still running: SIGHUP is a reload, not a shutdown
    } finally {
      c.kill('SIGTERM');
      await once(c, 'exit');
    }
  }, 180_000);

  it('when the active node dies, new sessions leave through another node', async () => {
    const before = activeNode()!;
    const dead = rig.state.nodes.find((n) => n.name === before)!;
    rig.kill(dead.id);
    const after = await until(
      () => {
        const n = activeNode();
        return n && n !== before ? n : undefined;
      },
      90_000,
      'a tunnel to another node',
    );
    const r = await curl(['--socks5-hostname', `127.0.0.1:${port}`, 'http://files.test/ip']);
    expect(r.stdout.toString()).toBe(rig.state.nodes.find((n) => n.name === after)!.exitAddress);
    // The switch names why it left: the tunnel died, or its server fell silent first.
    const reasons = logLines(logFile)
      .filter((l) => l.event === 'switch-state' && l.state === 'selecting')
      .map((l) => String(l.reason));
    expect(reasons.some((r) => r.includes(before) && /died|silent/.test(r))).toBe(true);
  }, 120_000);
});
