/**
 * "Share with this network" on a LAN (#63): the home computer runs Gatehop in one namespace, a
 * "phone" sits in another on a veth LAN. The phone is refused before it enrols; with its generated
 * password it gets through over SOCKS5 and HTTP; once it has fetched its PAC (as a stock Wi-Fi
 * proxy setting does) it gets through from that address with no password; another address on the
 * LAN does not, and an address outside this computer's networks is reset unheard, whatever it
 * sends. The device's QR code decodes, with a real decoder, to the address the window shows.
 * Revoking the device ends its open download at once and shuts both doors.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminOverSocket } from '../helpers/admin-client.js';
import { coreInNamespace, isRoot, lanPair, type NetNs, waitForLine } from '../helpers/netns.js';

const BIN = resolve(import.meta.dirname, '../../bin/gatehop.js');
const TRICKLE_SERVER = `
import sys, time, http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header('Content-Length', str(64 << 20))
        self.end_headers()
        for _ in range(1024):
            self.wfile.write(b'x' * 65536)
            self.wfile.flush()
            time.sleep(0.1)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), H)
print('trickling', flush=True)
s.serve_forever()
`;
/**
 * A phone's SOCKS5 UDP client (python, run in the phone's namespace): authenticates as the device,
 * asks for a UDP association, sends a datagram to the echo server through it from its own address,
 * then the same from a second address of the LAN (another device using the first one's relay).
 * Prints what came back for each: the echo, or "nothing".
 */
const UDP_CLIENT = `
import socket, struct, sys
proxy, port, user, pw, own, other, echo = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
c = socket.create_connection((proxy, port), timeout=5, source_address=(own, 0))
c.sendall(b'\\x05\\x01\\x02'); assert c.recv(2) == b'\\x05\\x02'
c.sendall(bytes([1, len(user)]) + user.encode() + bytes([len(pw)]) + pw.encode()); assert c.recv(2) == b'\\x01\\x00'
c.sendall(b'\\x05\\x03\\x00\\x01' + socket.inet_aton('0.0.0.0') + struct.pack('>H', 0))
r = c.recv(10); assert r[1] == 0, r
relay = (socket.inet_ntoa(r[4:8]), struct.unpack('>H', r[8:10])[0])
if relay[0] == '0.0.0.0': relay = (proxy, relay[1])
def ask(src, text):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((src, 0)); u.settimeout(1.5)
    u.sendto(b'\\x00\\x00\\x00\\x01' + socket.inet_aton(echo) + struct.pack('>H', 9999) + text, relay)
    try: return u.recv(2048)[10:].decode()
    except socket.timeout: return 'nothing'
print('own:', ask(own, b'from-the-phone'))
print('other:', ask(other, b'from-another-device'))
`;
const hasZbar = spawnSync('sh', ['-c', 'command -v zbarimg'], { encoding: 'utf8' }).status === 0;

describe.skipIf(!isRoot)('share with this network: a phone on the LAN uses this computer, and only it (#63)', () => {
  let home: NetNs;
  let phone: NetNs;
  let dir = '';
  let site = '';
  let device = { id: '', secret: '', pageUrl: '' };
  const lan = `10.${90 + (process.pid % 50)}.${Math.floor(Math.random() * 250)}`;
  const far = `10.${200 + (process.pid % 50)}.${Math.floor(Math.random() * 250)}`;

  const gatehop = (...args: string[]) =>
    spawnSync('ip', ['netns', 'exec', home.name, process.execPath, BIN, ...args, '--data-dir', dir], {
      encoding: 'utf8',
    });
  const api = (path: string, method = 'GET') => adminOverSocket(dir, method, path).json;
  const fromPhone = (args: string[]) =>
    spawnSync('ip', ['netns', 'exec', phone.name, 'curl', '-sS', '--max-time', '10', ...args], { encoding: 'utf8' });
  const status = (r: ReturnType<typeof fromPhone>) => (r.status === 0 ? Number(r.stdout.trim()) : -r.status!);

  beforeAll(async () => {
    let phoneDev = '';
    ({ a: home, b: phone, bDev: phoneDev } = lanPair(lan));
    home.exec(['ip', 'route', 'add', `${far}.0/24`, 'via', `${lan}.2`]);
    phone.exec(['ip', 'addr', 'add', `${far}.2/32`, 'dev', phoneDev]);
    // A second device on the same LAN (the phone's namespace, another address).
    phone.exec(['ip', 'addr', 'add', `${lan}.3/24`, 'dev', phoneDev]);
    dir = mkdtempSync(join(tmpdir(), 'gh-share-lan-'));
    site = join(dir, 'site');
    spawnSync('mkdir', [site]);
    writeFileSync(join(site, 'hello.txt'), 'hello from the LAN\n');
    const server = phone.spawn([
      'python3',
      '-u',
      '-m',
      'http.server',
      '8080',
      '--bind',
      `${lan}.2`,
      '--directory',
      site,
    ]);
    await waitForLine(server, /Serving HTTP/, 10_000);
    // A download that trickles (64 KiB every 100 ms of 64 MiB): no buffer on the way fills up, so
    // when the proxy cuts the session the phone's download stops then, not when buffers drain.
    const trickle = phone.spawn(['python3', '-u', '-c', TRICKLE_SERVER, `${lan}.2`, '8081']);
    await waitForLine(trickle, /trickling/, 10_000);
    writeFileSync(join(dir, 'config.yaml'), 'share:\n  enabled: true\n  port: 1081\n');
    await coreInNamespace(home, dir, {
      admin: true,
      logFile: join(dir, 'gatehop.log'),
      args: ['--config', join(dir, 'config.yaml')],
    });
    const added = gatehop('share', 'add', "Mum's phone");
    expect(added.status, added.stderr).toBe(0);
    const state = api('/share') as { devices: Array<{ id: string; pageUrl: string; proxyUrl: string }> };
    const d = state.devices[0]!;
    device = { id: d.id, pageUrl: d.pageUrl, secret: d.pageUrl.split('/d/')[1]! };
    // What the terminal was shown is what the API says.
    expect(added.stdout).toContain(d.pageUrl);
    expect(d.pageUrl).toBe(`http://${lan}.1:1081/d/${device.secret}`);
  }, 60_000);

  afterAll(() => {
    home?.close();
    phone?.close();
    if (dir && !process.env.KEEP) rmSync(dir, { recursive: true, force: true });
  });

  const target = () => `http://${lan}.2:8080/hello.txt`;
  const code = ['-o', '/dev/null', '-w', '%{http_code}'];

  it('refuses the phone before it enrols: no password, no way through', () => {
    expect(status(fromPhone([...code, '-x', `http://${lan}.1:1081`, target()]))).toBe(407);
    // SOCKS5 without a password: no acceptable method (curl reports the proxy's refusal, 97).
    expect(fromPhone(['-x', `socks5h://${lan}.1:1081`, target()]).status).not.toBe(0);
    expect(status(fromPhone([...code, '-x', `http://${device.id}:wrong@${lan}.1:1081`, target()]))).toBe(407);
  });

  it("carries the phone's requests with its generated password, over SOCKS5 and HTTP", () => {
    const socks = fromPhone(['-x', `socks5h://${device.id}:${device.secret}@${lan}.1:1081`, target()]);
    expect(socks.status, socks.stderr).toBe(0);
    expect(socks.stdout).toBe('hello from the LAN\n');
    expect(status(fromPhone([...code, '-x', `http://${device.id}:${device.secret}@${lan}.1:1081`, target()]))).toBe(
      200,
    );
  });

  it('admits the phone by its address once it fetched its PAC, as stock Wi-Fi settings do; not another device', () => {
    const pac = fromPhone([`${device.pageUrl}/proxy.pac`]);
    expect(pac.status, pac.stderr).toBe(0);
    expect(pac.stdout).toContain(`PROXY ${lan}.1:1081`);
    // What the stock setting then does: the proxy the PAC names, with no password.
    expect(status(fromPhone([...code, '-x', `http://${lan}.1:1081`, target()]))).toBe(200);
    expect(fromPhone(['-x', `socks5h://${lan}.1:1081`, target()]).stdout).toBe('hello from the LAN\n');
    // Another device on the LAN: not admitted by the phone's enrolment.
    expect(status(fromPhone([...code, '--interface', `${lan}.3`, '-x', `http://${lan}.1:1081`, target()]))).toBe(407);
    const view = api('/share') as { devices: Array<{ enrolledAddress: string; sessionsTotal: number }> };
    expect(view.devices[0]!.enrolledAddress).toBe(`${lan}.2`);
    expect(view.devices[0]!.sessionsTotal).toBeGreaterThanOrEqual(4);
  });

  it("shows the page in the phone's language, with what it protects said", () => {
    const page = fromPhone(['-H', 'Accept-Language: fa-IR,fa;q=0.9', device.pageUrl]);
    expect(page.stdout).toContain('<html lang="fa" dir="rtl">');
    expect(page.stdout).toContain(`${device.pageUrl}/proxy.pac`);
    expect(fromPhone(['-H', 'Accept-Language: zh-TW', device.pageUrl]).stdout).toContain('lang="zh-TW"');
    // A wrong key is any unknown path.
    expect(status(fromPhone([...code, `http://${lan}.1:1081/d/${'A'.repeat(24)}`]))).toBe(404);
  });

  it('resets an address outside this computer’s networks unheard, with the password and with the page key', () => {
    for (const args of [
      ['-x', `http://${device.id}:${device.secret}@${lan}.1:1081`, target()],
      [`${device.pageUrl}/proxy.pac`],
    ]) {
      const r = fromPhone(['--interface', `${far}.2`, ...args]);
      expect([7, 52, 56], r.stderr).toContain(r.status);
    }
  });

  it('refuses this computer itself on the shared port: loopback keeps its own listener', () => {
    const r = spawnSync(
      'ip',
      [
        'netns',
        'exec',
        home.name,
        'curl',
        '-sS',
        '--max-time',
        '5',
        '-x',
        `http://${device.id}:${device.secret}@127.0.0.1:1081`,
        target(),
      ],
      { encoding: 'utf8' },
    );
    expect([7, 52, 56], r.stderr).toContain(r.status);
  });

  it("says what this computer's firewall does with the port, as the phone finds it, and lets it in (nftables)", async () => {
    type Fw = { firewall: { tool: string | null; state: string; detail: string; opening: string[] | null } | null };
    const fw = async (): Promise<Fw['firewall']> => {
      // The reading is kept a few seconds: wait past it.
      await new Promise((r) => setTimeout(r, 3_100));
      return (api('/share') as Fw).firewall;
    };
    expect((await fw())?.state).toBe('open'); // no input filter in this namespace
    const table = `ghshare${process.pid}`;
    home.exec(['nft', 'add', 'table', 'inet', table]);
    home.exec(['nft', 'add', 'chain', 'inet', table, 'input', '{ type filter hook input priority 0; policy drop; }']);
    // What a desktop's firewall has: loopback and replies in, new connections dropped.
    home.exec(['nft', 'add', 'rule', 'inet', table, 'input', 'iif', 'lo', 'accept']);
    home.exec(['nft', 'add', 'rule', 'inet', table, 'input', 'ct', 'state', 'established,related', 'accept']);
    try {
      expect(await fw()).toMatchObject({ tool: 'nftables', state: 'blocked' });
      // As said: the phone cannot connect.
      const r = fromPhone(['--max-time', '3', '-x', `http://${device.id}:${device.secret}@${lan}.1:1081`, target()]);
      expect(r.status).toBe(28);
      // What "Allow in the firewall" runs (Gatehop is root here; a desktop user goes through pkexec).
      const blocked = await fw();
      expect(blocked!.opening).toEqual([
        `nft insert rule inet ${table} input ip saddr ${lan}.0/24 tcp dport 1081 accept`,
      ]);
      const opened = api('/share/firewall', 'POST') as Fw;
      expect(opened.firewall).toMatchObject({ tool: 'nftables', state: 'open', opening: null });
      expect(home.exec(['nft', 'list', 'chain', 'inet', table, 'input'])).toContain(
        `ip saddr ${lan}.0/24 tcp dport 1081 accept`,
      );
      const through = fromPhone(['-x', `http://${device.id}:${device.secret}@${lan}.1:1081`, target()]);
      expect(through.stdout, through.stderr).toBe('hello from the LAN\n');
    } finally {
      home.exec(['nft', 'delete', 'table', 'inet', table]);
    }
  }, 30_000);

  it('relays UDP only for the device that asked, from its address: another device on the LAN gets nothing through its relay', async () => {
    const echo = phone.spawn([
      'python3',
      '-u',
      '-c',
      `import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\ns.bind(('${lan}.2',9999))\nprint('echoing',flush=True)\nwhile True:\n  d,a=s.recvfrom(2048)\n  s.sendto(d,a)`,
    ]);
    await waitForLine(echo, /echoing/, 10_000);
    const r = spawnSync(
      'ip',
      [
        'netns',
        'exec',
        phone.name,
        'python3',
        '-c',
        UDP_CLIENT,
        `${lan}.1`,
        '1081',
        device.id,
        device.secret,
        `${lan}.2`,
        `${lan}.3`,
        `${lan}.2`,
      ],
      { encoding: 'utf8', timeout: 15_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('own: from-the-phone');
    expect(r.stdout).toContain('other: nothing');
  });

  it.skipIf(!hasZbar)('draws a QR code that a real decoder reads as the page address the window shows', () => {
    const qr = api(`/share/devices/${device.id}/qr`) as { url: string; png: string };
    expect(qr.url).toBe(device.pageUrl);
    const png = join(dir, 'qr.png');
    writeFileSync(png, Buffer.from(qr.png.replace(/^data:image\/png;base64,/, ''), 'base64'));
    const z = spawnSync('zbarimg', ['-q', '--raw', png], { encoding: 'utf8' });
    expect(z.status, z.stderr).toBe(0);
    expect(z.stdout.trim()).toBe(device.pageUrl);
  });

  it('revoking the device ends its download at once, and neither its password nor its address work after', async () => {
    const slow = spawn('ip', [
      'netns',
      'exec',
      phone.name,
      'curl',
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code} %{size_download}',
      '-x',
      `http://${lan}.1:1081`,
      `http://${lan}.2:8081/big.bin`,
    ]);
    let said = '';
    slow.stdout!.on('data', (c: Buffer) => (said += c.toString()));
    slow.stderr!.on('data', (c: Buffer) => (said += c.toString()));
    const exited = new Promise<number | null>((r) => slow.once('exit', (c) => r(c)));
    await new Promise((r) => setTimeout(r, 1_500));
    const open = api('/share') as { devices: Array<{ sessionsActive: number }> };
    expect(open.devices[0]!.sessionsActive).toBe(1);
    // The Connections view (and a Clash dashboard) lists it, named by its device.
    const listed = api('/connections') as {
      connections: Array<{ id: string; metadata: { inboundName: string; inboundUser: string } }>;
    };
    const mine = listed.connections.filter((c) => c.metadata.inboundUser === device.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.id).toMatch(/^lan-\d+$/);
    expect(mine[0]!.metadata.inboundName).toBe('gatehop-lan');
    const removed = gatehop('share', 'remove', device.id);
    expect(removed.status, removed.stderr).toBe(0);
    // 64 MiB at 640 KiB/s would take 100 s: the cut ends it long before.
    const exitCode = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 5_000))]);
    slow.kill();
    expect(exitCode, said).not.toBe(0);
    expect(exitCode).not.toBe('still running');
    expect(status(fromPhone([...code, '-x', `http://${lan}.1:1081`, target()]))).toBe(407);
    expect(status(fromPhone([...code, '-x', `http://${device.id}:${device.secret}@${lan}.1:1081`, target()]))).toBe(
      407,
    );
    expect(status(fromPhone([...code, device.pageUrl]))).toBe(404);
  });
});
