import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

/**
 * Real proxies from Debian, as a user's "other proxy" (config `upstream`): microsocks (SOCKS5,
 * CONNECT only), Dante (SOCKS5 with UDP ASSOCIATE) and tinyproxy (HTTP CONNECT). Each listens on
 * `host` (loopback by default; a namespace's address when `exec` runs it inside one).
 */
export interface RunningProxy {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface ProxyOptions {
  host?: string;
  port?: number;
  auth?: { user: string; pass: string };
  /** Prefix for the command (e.g. ['ip', 'netns', 'exec', NS]). */
  exec?: string[];
}

async function run(
  cmd: string[],
  o: ProxyOptions,
  scheme: string,
  port: number,
  cleanup: () => void = () => {},
): Promise<RunningProxy> {
  const host = o.host ?? '127.0.0.1';
  const full = [...(o.exec ?? []), ...cmd];
  const child: ChildProcess = spawn(full[0]!, full.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 10_000;
  // Ready when it accepts a connection (from where the test stands: the proxy's own address).
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${cmd[0]} exited ${child.exitCode}: ${stderr}`);
    const ok = await new Promise<boolean>((r) => {
      const s = connect({ host, port }, () => {
        s.destroy();
        r(true);
      });
      s.once('error', () => r(false));
    });
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${cmd[0]} not listening on ${host}:${port} within 10 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const who = o.auth ? `${o.auth.user}:${o.auth.pass}@` : '';
  return {
    url: `${scheme}://${who}${host}:${port}`,
    host,
    port,
    close: async () => {
      child.kill('SIGKILL');
      if (child.exitCode === null) await exited;
      cleanup();
    },
  };
}

export async function microsocks(o: ProxyOptions = {}): Promise<RunningProxy> {
  const port = o.port ?? (await freePort());
  const auth = o.auth ? ['-u', o.auth.user, '-P', o.auth.pass] : [];
  return run(['microsocks', '-i', o.host ?? '127.0.0.1', '-p', String(port), ...auth], o, 'socks5', port);
}

export async function tinyproxy(o: ProxyOptions = {}): Promise<RunningProxy> {
  const port = o.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'gh-tinyproxy-'));
  const conf = join(dir, 'tinyproxy.conf');
  writeFileSync(
    conf,
    [
      `Port ${port}`,
      `Listen ${o.host ?? '127.0.0.1'}`,
      'Timeout 60',
      'MaxClients 50',
      'LogLevel Warning',
      'DisableViaHeader Yes',
      // No ConnectPort line: CONNECT to any port (VPN Gate nodes listen on 443, 1194, 995, …).
      ...(o.auth ? [`BasicAuth ${o.auth.user} ${o.auth.pass}`] : []),
      '',
    ].join('\n'),
  );
  return run(['tinyproxy', '-d', '-c', conf], o, 'http', port, () => rmSync(dir, { recursive: true, force: true }));
}

/** Dante's SOCKS5 server with CONNECT and UDP ASSOCIATE for anyone (it runs as root, on `external` for its own traffic). */
export async function dante(o: ProxyOptions & { external?: string } = {}): Promise<RunningProxy> {
  const port = o.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'gh-dante-'));
  const conf = join(dir, 'danted.conf');
  writeFileSync(
    conf,
    [
      'logoutput: stderr',
      `internal: ${o.host ?? '127.0.0.1'} port = ${port}`,
      `external: ${o.external ?? o.host ?? '127.0.0.1'}`,
      'socksmethod: none',
      'clientmethod: none',
      'user.privileged: root',
      'user.unprivileged: nobody',
      'client pass { from: 0.0.0.0/0 to: 0.0.0.0/0 }',
      'socks pass { from: 0.0.0.0/0 to: 0.0.0.0/0 command: connect udpassociate udpreply }',
      '',
    ].join('\n'),
  );
  return run(['danted', '-f', conf, '-p', join(dir, 'danted.pid'), '-N', '1'], o, 'socks5', port, () =>
    rmSync(dir, { recursive: true, force: true }),
  );
}
