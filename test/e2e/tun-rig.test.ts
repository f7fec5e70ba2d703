import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusSchema, type Status } from '../../core/api/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { until } from '../helpers/fds.js';
import { isRoot } from '../helpers/netns.js';
import { freePort } from '../helpers/ports.js';
import { Rig, type RigHost } from '../rig/rig.js';
import { untilReady } from '../helpers/gatehop-process.js';
import { writeRigCliConfig } from '../helpers/rig-app.js';

const BIN = resolve(import.meta.dirname, '../../bin/gatehop.js');
const HELPER = resolve(import.meta.dirname, '../../native/build/Release/gatehop-capture');

/**
 * #46 TUN mode in a namespace standing in for the host (root, as `gatehop --tun` is): Gatehop runs
 * there over the rig's nodes, and programs there with no proxy settings reach the rig through the
 * tunnel; Gatehop's own new tunnel does not loop into its TUN; names are answered by Gatehop (the
 * stand-in host's resolver is an address only the TUN leads to); a clean stop removes every route,
 * rule and table; in strict mode a SIGKILL leaves the host's traffic blocked until `gatehop tun off`.
 * Started as `sudo gatehop --tun` is (root, SUDO_UID naming a user the test makes): the core runs as
 * that user (#59).
 */
describe.skipIf(!isRoot || process.platform !== 'linux' || !existsSync(HELPER))('TUN mode on the rig (#46)', () => {
  let rig: Rig;
  let host: RigHost;
  let listUrl = '';
  const dir = mkdtempSync(join(tmpdir(), 'gh-tun-'));
  const device = `ghtun${process.pid % 10000}`;
  const gid = String(61000 + (process.pid % 4000));
  const user = `ghtun${process.pid % 10000}`;
  let uid = -1;
  let core: { child: ChildProcess; admin: number; token: string; corePid: number } | null = null;

  const inNs = (cmd: string[], timeoutMs = 30_000): { code: number; stdout: string; stderr: string } => {
    try {
      const stdout = execFileSync('ip', ['netns', 'exec', host.ns, ...cmd], {
        encoding: 'utf8',
        timeout: timeoutMs,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      return { code: 0, stdout, stderr: '' };
    } catch (err) {
      const e = err as { status: number | null; stdout?: string; stderr?: string };
      return { code: e.status ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  };
  const status = async (): Promise<Status> =>
    statusSchema.parse(
      (await apiRequest(core!.admin, 'GET', '/status', { token: core!.token, host: host.address })).json(),
    );

  /** Gatehop in the stand-in host with TUN mode, up with a tunnel. */
  async function startCore(extra: string[]): Promise<void> {
    const admin = await freePort();
    const config = writeRigCliConfig(rig, join(dir, 'config.yaml'), { mode: 'global' });
    // The admin API answers on the stand-in host's link to this namespace, where the test asks it.
    const child = spawn(
      'ip',
      [
        ...['netns', 'exec', host.ns, process.execPath, BIN, '--egress', 'vpngate', '--api', listUrl],
        ...['--listen', '127.0.0.1:1080', '--admin', `${host.address}:${admin}`, '--data-dir', dir],
        ...[
          '--config',
          config,
          '--log-file',
          join(dir, 'gatehop.log'),
          '--tun',
          '--tun-name',
          device,
          '--tun-gid',
          gid,
        ],
        ...extra,
      ],
      // As sudo leaves it: root, with the user who ran it in SUDO_UID.
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SUDO_UID: String(uid) } },
    );
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4000)));
    await untilReady(() => ({ stdout: out, stderr: err, exited: child.exitCode !== null }));
    core = {
      child,
      admin,
      token: readFileSync(join(dir, 'admin-token'), 'utf8').trim(),
      corePid: corePidOf(child.pid!),
    };
    await until(async () => (await status()).active?.nodeId ?? undefined, 90_000, 'a tunnel up');
  }

  /** The core the supervisor (pid) started: its child running bin/gatehop.js. */
  const corePidOf = (supervisor: number): number => {
    for (const p of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
      try {
        const ppid = Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
        if (ppid === supervisor && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('gatehop.js')) return Number(p);
      } catch {
        // gone meanwhile
      }
    }
    throw new Error(`no core under the supervisor ${supervisor}`);
  };
  const procStatus = (pid: number): Record<string, string> =>
    Object.fromEntries(
      readFileSync(`/proc/${pid}/status`, 'utf8')
        .split('\n')
        .filter((l) => l.includes(':'))
        .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
    );

  /** Stops the supervisor with `signal` and waits for it and the core it ran to be gone. */
  const stopCore = async (signal: NodeJS.Signals): Promise<void> => {
    const c = core?.child;
    const corePid = core?.corePid;
    core = null;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill(signal);
    await exited;
    // After a SIGKILL the core sees its supervisor's channel close and stops by itself.
    if (corePid) await until(async () => (existsSync(`/proc/${corePid}`) ? undefined : true), 20_000, 'the core gone');
  };

  const rules = (): string => inNs(['ip', 'rule']).stdout + inNs(['nft', 'list', 'tables']).stdout;
  /** A command in the host's namespace that must work: its output. */
  const inNsOk = (cmd: string[]): string => {
    const r = inNs(cmd);
    if (r.code !== 0) throw new Error(`${cmd.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  beforeAll(async () => {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', user]);
    uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, Number(gid)); // the user's data dir, as ~/.config/Gatehop would be
    rig = await Rig.up({ nodes: 2, openvpn: [] });
    host = rig.addHost('tun', { lan: true });
    // The stand-in host's resolver: an address nothing answers for, so a query can only be
    // answered by Gatehop (its packets go into the TUN); the file goes with the rig's namespace.
    mkdirSync(`/etc/netns/${host.ns}`, { recursive: true });
    writeFileSync(`/etc/netns/${host.ns}/resolv.conf`, 'nameserver 192.0.2.53\noptions timeout:2 attempts:1\n');
    listUrl = (await rig.serveList({ ns: host.ns, host: '127.0.0.1', https: true })).listUrl;
    await startCore([]);
  }, 240_000);

  afterAll(async () => {
    await stopCore('SIGTERM');
    if (host) inNs([process.execPath, BIN, 'tun', 'off', '--tun-name', device]);
    await rig?.down();
    try {
      execFileSync('userdel', [user]);
    } catch {
      // not made (useradd failed): nothing to remove
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('the core runs as the user sudo ran for, with TUN mode’s group alone and no capability; only the supervisor is root', () => {
    const s = procStatus(core!.corePid);
    expect(s.Uid!.split(/\s+/)).toEqual([String(uid), String(uid), String(uid), String(uid)]);
    expect(s.Gid!.split(/\s+/)).toEqual([gid, gid, gid, gid]);
    expect(s.Groups).toBe('');
    expect([s.CapEff, s.CapPrm]).toEqual(['0000000000000000', '0000000000000000']);
    // So whatever it starts (POST /capture/run, a terminal) is the user's too: it cannot gain root.
    expect(procStatus(core!.child.pid!).Uid!.split(/\s+/)[0]).toBe('0');
    // The helper that holds the device became the user before it touched the core's socket.
    const helpers = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith(`${HELPER}\0--tun\0${device}`);
        } catch {
          return false;
        }
      });
    expect(helpers).toHaveLength(1);
    expect(procStatus(Number(helpers[0])).Uid!.split(/\s+/)).toEqual([
      String(uid),
      String(uid),
      String(uid),
      String(uid),
    ]);
    // Nothing the core made in the user's data dir is root's (config.yaml is the test's own).
    for (const f of readdirSync(dir).filter((x) => x !== 'config.yaml'))
      expect(statSync(join(dir, f)).uid, f).toBe(uid);
  });

  it('a program with no proxy settings reaches the rig through the tunnel, by address and by a name Gatehop answers', async () => {
    const exit = (id: string): string => rig.state.nodes.find((n) => n.name === id || n.id === id)!.exitAddress;
    const active = (await status()).active!.nodeId!;
    const byAddress = inNs(['curl', '-sS', '-m', '20', rig.url('/ip')]);
    expect(byAddress, byAddress.stderr).toMatchObject({ code: 0, stdout: exit(active) });
    const lookup = inNs(['getent', 'hosts', 'files.test']);
    expect(lookup.stdout).toMatch(/^198\.1[89]\.\d+\.\d+\s+files\.test/);
    const byName = inNs(['curl', '-sS', '-m', '20', 'http://files.test/ip']);
    expect(byName, byName.stderr).toMatchObject({ code: 0, stdout: exit(active) });
  }, 60_000);

  it("Gatehop's own new tunnel does not loop into its TUN: a switch to the other node comes up and carries the program", async () => {
    const from = (await status()).active!.nodeId!;
    const to = rig.state.nodes.find((n) => n.name !== from && n.id !== from)!;
    const r = await apiRequest(core!.admin, 'POST', '/switch', {
      token: core!.token,
      host: host.address,
      body: { nodeId: to.name },
    });
    expect(r.status, JSON.stringify(r.json())).toBeLessThan(300);
    await until(
      async () => ((await status()).active?.nodeId === to.name ? true : undefined),
      60_000,
      `the switch to ${to.name}`,
    );
    const byAddress = inNs(['curl', '-sS', '-m', '20', rig.url('/ip')]);
    expect(byAddress, byAddress.stderr).toMatchObject({ code: 0, stdout: to.exitAddress });
  }, 90_000);

  it('a clean stop removes every route, rule and table of its own and nothing of another program’s; strict mode after a SIGKILL blocks until `gatehop tun off`', async () => {
    expect(rules()).toMatch(/26471:\s+from all iif lo lookup 26472/);
    // sing-box's and mihomo's defaults (table 2022, rules at 9000), and a rule of another program's
    // at Gatehop's own preference: none of them is Gatehop's to remove (#59).
    const theirs = [
      ['pref', '9000', 'to', '203.0.113.0/24', 'lookup', '2022'],
      ['pref', '9001', 'iif', 'lo', 'to', '203.0.113.0/24', 'lookup', '2022'],
      ['pref', '26471', 'to', '198.51.100.0/24', 'lookup', 'main'],
    ];
    for (const r of theirs) inNsOk(['ip', 'rule', 'add', ...r]);
    inNsOk(['ip', 'route', 'add', 'unreachable', '203.0.113.0/24', 'table', '2022']);
    await stopCore('SIGTERM');
    expect(rules()).not.toMatch(/fwmark 0x6768|lookup 26472|gatehop_/);
    expect(rules()).toMatch(/9000:\s+from all to 203\.0\.113\.0\/24 lookup 2022/);
    expect(rules()).toMatch(/9001:\s+from all to 203\.0\.113\.0\/24 iif lo lookup 2022/);
    expect(rules()).toMatch(/26471:\s+from all to 198\.51\.100\.0\/24 lookup main/);
    expect(inNsOk(['ip', 'route', 'show', 'table', '2022'])).toMatch(/unreachable 203\.0\.113\.0\/24/);
    const offAfterStop = inNs([process.execPath, BIN, 'tun', 'off', '--tun-name', device]);
    expect(offAfterStop.code, offAfterStop.stderr).toBe(0);
    expect(rules()).toMatch(/9000:.*lookup 2022[\s\S]*9001:.*lookup 2022[\s\S]*26471:.*198\.51\.100/);
    for (const r of theirs) inNsOk(['ip', 'rule', 'del', ...r]);
    inNsOk(['ip', 'route', 'flush', 'table', '2022']);

    // A node's SoftEther port on the lan: reached directly when no TUN mode is on.
    const lanNode = rig.state.nodes[0]!.vpnAddress;
    const reach = (): number => inNs(['timeout', '3', 'bash', '-c', `</dev/tcp/${lanNode}/443`], 10_000).code;
    expect(reach()).toBe(0);
    await startCore(['--tun-strict']);
    expect(inNs(['curl', '-sS', '-m', '20', rig.url('/ip')]).code).toBe(0);
    await stopCore('SIGKILL');
    // Gatehop gone: its TUN and routes with it, the drop stays. Nothing leaves directly.
    expect(reach()).not.toBe(0);
    expect(inNs(['curl', '-sS', '-m', '3', rig.url('/ip')]).code).not.toBe(0);
    const off = inNs([process.execPath, BIN, 'tun', 'off', '--tun-name', device]);
    expect(off.stdout).toMatch(/removed .*nft inet gatehop_/);
    expect(reach()).toBe(0);
  }, 180_000);
});
