import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createUnixServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusSchema } from '../../core/api/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { until } from '../helpers/fds.js';
import { GatehopProcess } from '../helpers/gatehop-process.js';
import { isRoot } from '../helpers/netns.js';
import { freePort } from '../helpers/ports.js';
import { Rig } from '../rig/rig.js';
import { dnsCounter } from '../helpers/dns-counter.js';
import { writeRigCliConfig } from '../helpers/rig-app.js';

const BIN = resolve(import.meta.dirname, '../../bin/gatehop.js');
const HELPER = resolve(import.meta.dirname, '../../native/build/Release/gatehop-capture');

/**
 * #46 `gatehop run` as a user would: an unprivileged user (made by this test) runs Gatehop over
 * the rig, then programs under `gatehop run` with no proxy settings: their TCP, UDP and names go
 * through the node, rules send a name DIRECT or refuse it, no DNS packet leaves this host, a big
 * download arrives whole, and nothing of a program's namespace outlives it. /dev/net/tun is made
 * 0666 as desktops have it (and put back).
 */
describe.skipIf(!isRoot || process.platform !== 'linux' || !existsSync(HELPER))('gatehop run on the rig (#46)', () => {
  let rig: Rig;
  let core: GatehopProcess;
  let local: Server;
  let lan: Server;
  let localPort = 0;
  let admin = 0;
  let dir = '';
  const user = `ghcap${process.pid}`;
  let uid = 0;
  let gid = 0;
  let tunMode = 0o600;
  let dns: { packets: () => number; remove: () => void } | null = null;
  let dnsBefore = 0;

  /** setpriv's arguments that run `cmd` as the test's user, with no other group. */
  const asUser = (cmd: string[]): string[] => [
    '--reuid',
    String(uid),
    '--regid',
    String(gid),
    '--clear-groups',
    '--',
    ...cmd,
  ];

  /** `gatehop run -- CMD…` as the test's user, with no proxy variables; its exit code and output. */
  function run(
    cmd: string[],
    o: { admin?: number; dataDir?: string } = {},
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((res) => {
      const c = spawn(
        'setpriv',
        asUser([
          process.execPath,
          BIN,
          'run',
          '--data-dir',
          o.dataDir ?? dir,
          '--admin',
          `127.0.0.1:${o.admin ?? admin}`,
          '--',
          ...cmd,
        ]),
        { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir } },
      );
      const out: Buffer[] = [];
      let stderr = '';
      c.stdout.on('data', (b: Buffer) => out.push(b));
      c.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      c.on('exit', (code) => res({ code, stdout: Buffer.concat(out).toString(), stderr }));
    });
  }

  /** The network namespaces the test user's processes are in (the core's is the host's). */
  function userNetNamespaces(): Set<string> {
    const seen = new Set<string>();
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        if (statSync(`/proc/${pid}`).uid !== uid) continue;
        seen.add(readlinkSync(`/proc/${pid}/ns/net`));
      } catch {
        // gone meanwhile
      }
    }
    return seen;
  }

  beforeAll(async () => {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', user]);
    uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
    tunMode = statSync('/dev/net/tun').mode & 0o777;
    chmodSync('/dev/net/tun', 0o666); // as systemd's udev rule makes it on a desktop
    rig = await Rig.up({ nodes: 1, openvpn: [], bigMib: 64 });
    // A web host on this machine, on its loopback and on its address on the rig's lan: what a flow
    // a rule sends DIRECT reaches (the program cannot by itself: its 127.0.0.1 is its own
    // namespace's), and Gatehop refuses to be its way to this machine's loopback (#59).
    const answer = (req: IncomingMessage, res: ServerResponse): void =>
      void res.end(`direct ${req.socket.localAddress}`);
    local = createServer(answer);
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', () => r()));
    localPort = (local.address() as AddressInfo).port;
    lan = createServer(answer);
    await new Promise<void>((r) => lan.listen(localPort, rig.state.rootAddress, () => r()));
    dir = mkdtempSync(join(tmpdir(), 'gh-capture-'));
    chownSync(dir, uid, gid);
    const config = writeRigCliConfig(rig, join(dir, 'config.yaml'), {
      mode: 'rule',
      rules: [
        'DOMAIN-SUFFIX,blocked.test,REJECT',
        // Needs the address of every named flow that gets this far: resolved inside the tunnel.
        'IP-CIDR,192.0.2.0/24,DIRECT',
        // here.test and host.test are names only the rig's resolver (inside the tunnel) knows: they
        // answer 127.0.0.1 and this machine's address on the rig's lan.
        'IP-CIDR,127.0.0.1/32,DIRECT',
        `IP-CIDR,${rig.state.rootAddress}/32,DIRECT`,
        'MATCH,TUNNEL',
      ],
    });
    admin = await freePort();
    core = new GatehopProcess(
      dir,
      [
        '--egress',
        'vpngate',
        '--api',
        rig.state.apiUrl,
        '--listen',
        `127.0.0.1:${await freePort()}`,
        '--admin',
        `127.0.0.1:${admin}`,
        '--data-dir',
        dir,
        '--config',
        config,
        '--log-file',
        join(dir, 'gatehop.log'),
      ],
      { user: { uid, gid } },
    );
    await core.ready();
    const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
    await until(
      async () =>
        statusSchema.parse((await apiRequest(admin, 'GET', '/status', { token })).json()).active?.nodeId ?? undefined,
      90_000,
      'a tunnel up',
    );
    // Every DNS packet this host sends from here on is counted (the test's own nftables table).
    dns = dnsCounter('gh_capture', uid);
    // The counter counts: one datagram to port 53 on loopback (nothing listens there), from the user.
    execFileSync(
      'setpriv',
      asUser([
        process.execPath,
        '-e',
        "const s = require('node:dgram').createSocket('udp4'); s.send(Buffer.from('x'), 53, '127.0.0.1', () => s.close());",
      ]),
    );
    // Counted in the output hook during sendmsg, which returned before that process exited: no wait.
    expect(dns.packets()).toBeGreaterThanOrEqual(1);
    dnsBefore = dns.packets();
  }, 240_000);

  afterAll(async () => {
    dns?.remove();
    await core?.stop();
    await new Promise<void>((r) => (local ? local.close(() => r()) : r()));
    await new Promise<void>((r) => (lan ? lan.close(() => r()) : r()));
    await rig?.down();
    chmodSync('/dev/net/tun', tunMode);
    try {
      execFileSync('userdel', [user]);
    } catch {
      // not made (useradd failed): nothing to remove
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('curl with no proxy settings reaches the rig’s web host through the node, by name and by address; names are answered by Gatehop', async () => {
    const exit = rig.state.nodes[0]!.exitAddress;
    const byName = await run(['curl', '-sS', '-m', '20', 'http://files.test/ip']);
    expect(byName, byName.stderr).toMatchObject({ code: 0, stdout: exit });
    const byAddress = await run(['curl', '-sS', '-m', '20', rig.url('/ip')]);
    expect(byAddress, byAddress.stderr).toMatchObject({ code: 0, stdout: exit });
    // The program's resolver is Gatehop's gateway: a name gets a fake address, the real one is
    // found inside the tunnel when the program connects.
    const lookup = await run(['getent', 'hosts', 'files.test']);
    expect(lookup.stdout).toMatch(/^198\.1[89]\.\d+\.\d+\s+files\.test/);
    // IPv6 is not carried: refused at once (no route), never a wait for a timeout.
    const v6 = await run([
      'curl',
      '-sS',
      '-m',
      '10',
      '-o',
      '/dev/null',
      '-w',
      '%{time_total}',
      'http://[2001:db8::1]/',
    ]);
    expect(v6.code, v6.stderr).toBe(7);
  }, 60_000);

  it('UDP goes through the tunnel: an echo, and a DNS query the program sends to the rig’s own resolver', async () => {
    const script = join(dir, 'udp.cjs');
    writeFileSync(
      script,
      `const dgram = require('node:dgram');
const inet = process.argv[2];
function ask(port, payload) {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    const timer = setInterval(() => s.send(payload, port, inet), 500);
    s.on('message', (m) => { clearInterval(timer); s.close(); resolve(m); });
    s.send(payload, port, inet);
    setTimeout(() => reject(new Error('no answer from ' + port)), 10000).unref();
  });
}
(async () => {
  const echo = await ask(7, Buffer.from('hello over udp'));
  // files.test, type A, class IN
  const q = Buffer.from('abcd01000001000000000000' + '0566696c65730474657374' + '00' + '00010001', 'hex');
  const a = await ask(53, q);
  console.log(JSON.stringify({ echo: echo.toString(), answer: [...a.subarray(a.length - 4)].join('.') }));
})().catch((e) => { console.error(e.message); process.exit(1); });
`,
    );
    const r = await run([process.execPath, script, rig.state.inetAddress]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ echo: 'hello over udp', answer: rig.state.inetAddress });
  }, 60_000);

  it('rules apply as for the proxy port: a DIRECT name leaves from this host, a REJECT name is refused; DIRECT never leads to this machine’s loopback (#59)', async () => {
    // host.test resolves to this machine's lan address inside the tunnel; its /32 rule sends it DIRECT.
    const direct = await run(['curl', '-sS', '-m', '20', `http://host.test:${localPort}/`]);
    expect(direct, direct.stderr).toMatchObject({ code: 0, stdout: `direct ${rig.state.rootAddress}` });
    // here.test resolves to 127.0.0.1, sent DIRECT by its rule too: that would be this machine's
    // own services, which a captured program does not reach through Gatehop. Nor by "localhost",
    // which is the program's own loopback (nothing listens there).
    for (const name of ['here.test', 'localhost']) {
      const own = await run(['curl', '-sS', '-m', '20', `http://${name}:${localPort}/`]);
      expect(own.code, `${name}: ${own.stdout}`).not.toBe(0);
      expect(own.stdout).not.toMatch(/direct/);
    }
    const refused = await run(['curl', '-sS', '-m', '20', 'http://www.blocked.test/']);
    // The gateway's stack took the connection before the rules answered: it is reset, which curl
    // reports as a failed connect, a reset or an empty reply, depending on when the reset lands.
    expect([7, 52, 56]).toContain(refused.code);
    expect(refused.stderr).toMatch(/Couldn't connect|reset|Empty reply|Recv failure/i);
  }, 60_000);

  it('no DNS packet left this host from the user for any of it (the names were answered by Gatehop and resolved in the tunnel)', async () => {
    await run(['curl', '-sS', '-m', '20', '-o', '/dev/null', 'http://files.test/']);
    expect(dns!.packets()).toBe(dnsBefore);
  }, 60_000);

  it('the host’s name services are hidden from the program: systemd-resolved’s socket refuses it, the host’s own processes still reach it (#59)', async () => {
    // systemd-resolved as a desktop runs it, standing in (this machine runs none: its nsswitch.conf
    // has no `resolve`, so nothing else here asks this path meanwhile).
    const path = '/run/systemd/resolve/io.systemd.Resolve';
    if (existsSync(path)) return; // a real one: not the test's to replace
    const made = ['/run/systemd', '/run/systemd/resolve'].find((d) => !existsSync(d));
    mkdirSync('/run/systemd/resolve', { recursive: true });
    const asked: string[] = [];
    const resolved = createUnixServer((s) => {
      asked.push('a client');
      s.end();
    });
    await new Promise<void>((r) => resolved.listen(path, () => r()));
    chmodSync(path, 0o666);
    try {
      const probe = `require('node:net').connect('${path}').on('connect', () => { console.log('reached'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(3); })`;
      const captured = await run([process.execPath, '-e', probe]);
      expect(captured.stdout.trim(), captured.stderr).toBe('ECONNREFUSED');
      expect(asked).toEqual([]);
      const host = execFileSync('setpriv', asUser([process.execPath, '-e', probe]), { encoding: 'utf8' });
      expect(host.trim()).toBe('reached');
    } finally {
      await new Promise<void>((r) => resolved.close(() => r()));
      rmSync(path, { force: true });
      if (made) rmSync(made, { recursive: true, force: true });
    }
  }, 60_000);

  it('a 64 MiB download through run arrives byte-exact', async () => {
    const r = await run(['sh', '-c', `curl -sS -m 120 ${rig.url('/big')} | sha256sum`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split(' ')[0]).toBe(rig.state.bigSha256);
  }, 180_000);

  it('the exit code is the program’s, and nothing of its namespace is left after it', async () => {
    const before = userNetNamespaces(); // the core's: the host's
    expect(before.size).toBe(1);
    const r = await run(['sh', '-c', 'exit 7']);
    expect(r.code).toBe(7);
    expect(userNetNamespaces()).toEqual(before);
  }, 30_000);

  it('with no Gatehop running, run says so, runs nothing and sends a stranger on the admin port nothing (#59); with /dev/net/tun 0600 it says what to change', async () => {
    const marker = join(dir, 'ran');
    // Another data dir, with no core: its token file left by an earlier run, and someone else
    // listening on the admin port the command is given.
    const idle = mkdtempSync(join(tmpdir(), 'gh-capture-idle-'));
    writeFileSync(join(idle, 'admin-token'), 'the-users-token-0123456789\n');
    chownSync(idle, uid, gid);
    const seen: string[] = [];
    const strangerServer = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      res.end('{}');
    });
    await new Promise<void>((r) => strangerServer.listen(0, '127.0.0.1', () => r()));
    try {
      const none = await run(['touch', marker], {
        admin: (strangerServer.address() as AddressInfo).port,
        dataDir: idle,
      });
      expect(none.code).toBe(125);
      expect(none.stderr).toMatch(/Gatehop is not running.*Nothing was run/);
      expect(seen).toEqual([]);
    } finally {
      strangerServer.close();
    }
    expect(existsSync(marker)).toBe(false);
    chmodSync('/dev/net/tun', 0o600);
    try {
      const denied = await run(['touch', marker]);
      expect(denied.code).toBe(125);
      expect(denied.stderr).toMatch(/\/dev\/net\/tun.*0600.*chmod 0666 \/dev\/net\/tun/s);
      expect(existsSync(marker)).toBe(false);
    } finally {
      chmodSync('/dev/net/tun', 0o666);
    }
  }, 30_000);

  it('when Gatehop stops under a running program, the program loses its network instead of reaching the host’s', async () => {
    const running = run([
      'sh',
      '-c',
      `curl -sS -m 10 -o /dev/null ${rig.url('/')} && echo first-ok && touch ${dir}/first; while [ ! -e ${dir}/stopped ]; do sleep 0.1; done; curl -sS -m 5 -o /dev/null ${rig.url('/')}; echo second=$?`,
    ]);
    await until(() => (existsSync(join(dir, 'first')) ? true : undefined), 20_000, 'the first request through run');
    await core.stop();
    writeFileSync(join(dir, 'stopped'), '');
    const r = await running;
    expect(r.stdout).toContain('first-ok');
    expect(r.stdout).toMatch(/second=[1-9]/);
    expect(r.stderr).toMatch(/Gatehop stopped: sh has no network now/);
  }, 60_000);
});
