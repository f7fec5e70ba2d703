/**
 * The devices "Share with this network" admits (#63): generated passwords checked whatever the
 * name, one address per device and one device per address, admission that lapses unless used, and
 * revocation that forgets both at once.
 */
import { describe, expect, it } from 'vitest';
import { DeviceBook, ENROL_MS, MAX_DEVICES, type DeviceKeeper, type ShareDevice } from '../../core/share/index.js';
import { clashProfile, judgeRuleset, lanAddresses, openingCommands, phoneLang } from '../../core/share/index.js';

function memoryKeeper(): DeviceKeeper & { rows: Map<string, ShareDevice>; saves: number } {
  const rows = new Map<string, ShareDevice>();
  const k = {
    rows,
    saves: 0,
    load: () => [...rows.values()].map((d) => ({ ...d })),
    save: (d: ShareDevice) => {
      k.saves++;
      rows.set(d.id, { ...d });
    },
    remove: (id: string) => void rows.delete(id),
  };
  return k;
}

describe('DeviceBook', () => {
  it('checks a device by its generated password, and an unknown name or a wrong password fails', async () => {
    const book = new DeviceBook(null);
    const d = book.add("  Mum's   phone ");
    expect(d.name).toBe("Mum's phone");
    expect(d.id).toMatch(/^d[a-z2-9]{7}$/);
    expect(d.secret).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(await book.verify(d.id, d.secret)).toBe(true);
    expect(await book.verify(d.id, `${d.secret}x`)).toBe(false);
    expect(await book.verify('nobody', d.secret)).toBe(false);
  });

  it('refuses an empty or control-character name, and more than MAX_DEVICES devices', () => {
    const book = new DeviceBook(null);
    expect(() => book.add('   ')).toThrow(/1 to 64/);
    expect(() => book.add('tv\u0007')).toThrow(/printable/);
    for (let i = 0; i < MAX_DEVICES; i++) book.add(`d${i}`);
    expect(() => book.add('one more')).toThrow(/at most 64/);
  });

  it('admits an enrolled address without a password, renews it with use, and lets it lapse unused', () => {
    let now = 1_000_000;
    const book = new DeviceBook(null, () => now);
    const d = book.add('phone');
    expect(book.admitted('192.168.1.20')).toBeNull();
    book.enrol(d, '::ffff:192.168.1.20');
    expect(d.enrolledAddress).toBe('192.168.1.20');
    now += ENROL_MS - 1;
    expect(book.admitted('192.168.1.20')).toBe(d.id); // used just in time: renewed
    now += ENROL_MS - 1;
    expect(book.admitted('::ffff:192.168.1.20')).toBe(d.id);
    now += ENROL_MS;
    expect(book.admitted('192.168.1.20')).toBeNull(); // a day unused
    expect(d.enrolledAddress).toBeNull();
  });

  it('gives an address to one device: a second enrolling from it takes it over', () => {
    const book = new DeviceBook(null);
    const a = book.add('a');
    const b = book.add('b');
    book.enrol(a, '10.0.0.5');
    book.enrol(b, '10.0.0.5');
    expect(book.admitted('10.0.0.5')).toBe(b.id);
    expect(a.enrolledAddress).toBeNull();
    book.enrol(b, '10.0.0.6'); // b moved: its old address admits nobody
    expect(book.admitted('10.0.0.5')).toBeNull();
    expect(book.admitted('10.0.0.6')).toBe(b.id);
  });

  it('revokes a device at once: password, page key and address stop working, listeners are told', async () => {
    const keeper = memoryKeeper();
    const book = new DeviceBook(keeper);
    const d = book.add('tv');
    book.enrol(d, '10.0.0.9');
    const told: string[] = [];
    book.onRevoked((x) => told.push(x.id));
    expect(book.revoke(d.id)).toBe(true);
    expect(told).toEqual([d.id]);
    expect(await book.verify(d.id, d.secret)).toBe(false);
    expect(book.bySecret(d.secret)).toBeNull();
    expect(book.admitted('10.0.0.9')).toBeNull();
    expect(keeper.rows.has(d.id)).toBe(false);
    expect(book.revoke(d.id)).toBe(false);
  });

  it('keeps devices and their enrolment across a restart, writing a renewal at most every few minutes', () => {
    let now = 5_000_000;
    const keeper = memoryKeeper();
    const first = new DeviceBook(keeper, () => now);
    const d = first.add('laptop');
    first.enrol(d, '10.1.1.7');
    const saves = keeper.saves;
    for (let i = 0; i < 100; i++) first.admitted('10.1.1.7');
    expect(keeper.saves).toBe(saves); // a connection's renewal is not a write
    now += 11 * 60_000;
    first.admitted('10.1.1.7');
    expect(keeper.saves).toBe(saves + 1);
    const second = new DeviceBook(keeper, () => now);
    expect(second.admitted('10.1.1.7')).toBe(d.id);
    expect(second.get(d.id)?.name).toBe('laptop');
  });
});

describe('the phone page and the LAN addresses', () => {
  it('speaks the language the phone asks for, among the four, English otherwise', () => {
    expect(phoneLang('fa-IR,fa;q=0.9,en;q=0.5', null)).toBe('fa');
    expect(phoneLang('zh-TW,zh;q=0.9', null)).toBe('zh-TW');
    expect(phoneLang('zh-Hant-HK', null)).toBe('zh-TW');
    expect(phoneLang('zh-CN', null)).toBe('zh-CN');
    expect(phoneLang('de-DE,de', null)).toBe('en');
    expect(phoneLang('fa', 'zh-CN')).toBe('zh-CN'); // ?lang= wins
  });

  it('lists LAN addresses private IPv4 first, never loopback, link-local or a container bridge first', () => {
    const ifs = () =>
      ({
        lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true, cidr: '127.0.0.1/8' }],
        docker0: [{ address: '172.17.0.1', family: 'IPv4', internal: false, cidr: '172.17.0.1/16' }],
        wlan0: [
          { address: 'fe80::1', family: 'IPv6', internal: false, cidr: 'fe80::1/64' },
          { address: 'fd12::5', family: 'IPv6', internal: false, cidr: 'fd12::5/64' },
          { address: '192.168.1.5', family: 'IPv4', internal: false, cidr: '192.168.1.5/24' },
        ],
      }) as unknown as ReturnType<typeof import('node:os').networkInterfaces>;
    expect(lanAddresses(ifs).map((a) => a.address)).toEqual(['192.168.1.5', 'fd12::5', '172.17.0.1']);
    // What a firewall rule names: the network, not the address.
    expect(lanAddresses(ifs).map((a) => a.cidr)).toEqual(['192.168.1.0/24', 'fd12::5/64', '172.17.0.0/16']);
  });

  it("writes a Clash profile that sends everything through this listener with the device's password", () => {
    const d = { id: 'dabc2345', name: 'phone\nx', secret: 'S'.repeat(24) } as ShareDevice;
    const y = clashProfile(d, '::ffff:192.168.1.5', 1081);
    expect(y).toContain('server: "192.168.1.5"');
    expect(y).toContain('username: "dabc2345"');
    expect(y).toContain(`password: "${'S'.repeat(24)}"`);
    expect(y).toMatch(/rules:\n {2}- MATCH,Gatehop\n/);
    expect(y.split('\n')[0]).not.toContain('\nx'); // a name cannot break out of the comment
  });
});

describe("reading the firewall's answer for the shared port (nftables JSON, as `nft -j list ruleset` prints it)", () => {
  const chain = (policy: string) => ({
    chain: { family: 'inet', table: 't', name: 'input', type: 'filter', hook: 'input', prio: 0, policy },
  });
  const rule = (...expr: unknown[]) => ({ rule: { family: 'inet', table: 't', chain: 'input', expr } });
  const dport = (right: unknown, protocol = 'tcp') => ({
    match: { op: '==', left: { payload: { protocol, field: 'dport' } }, right },
  });
  const doc = (...o: unknown[]) => ({ nftables: o }) as Parameters<typeof judgeRuleset>[0];
  const lo = rule({ match: { op: '==', left: { meta: { key: 'iif' } }, right: 'lo' } }, { accept: null });
  const established = rule(
    { match: { op: 'in', left: { ct: { key: 'state' } }, right: ['established', 'related'] } },
    { accept: null },
  );

  it('a drop policy blocks the port unless a rule lets it in (a set, a range, from some addresses)', () => {
    expect(judgeRuleset(doc(chain('drop'), lo, established), 1081).state).toBe('blocked');
    expect(judgeRuleset(doc(chain('drop'), lo, rule(dport({ set: [22, 1081] }), { accept: null })), 1081).state).toBe(
      'open',
    );
    expect(judgeRuleset(doc(chain('drop'), rule(dport({ range: [1000, 2000] }), { accept: null })), 1081).state).toBe(
      'open',
    );
    expect(judgeRuleset(doc(chain('drop'), rule(dport(1081, 'udp'), { accept: null })), 1081).state).toBe('blocked');
    const fromLan = rule(
      {
        match: {
          op: '==',
          left: { payload: { protocol: 'ip', field: 'saddr' } },
          right: { prefix: { addr: '10.0.0.0', len: 8 } },
        },
      },
      dport(1081),
      { accept: null },
    );
    expect(judgeRuleset(doc(chain('drop'), fromLan), 1081).state).toBe('open');
  });

  it('an accept policy lets it in unless a rule drops it first; no input filter at all is open', () => {
    expect(judgeRuleset(doc(chain('accept')), 1081).state).toBe('open');
    expect(judgeRuleset(doc(chain('accept'), rule(dport(1081), { drop: null })), 1081).state).toBe('blocked');
    expect(judgeRuleset(doc(), 1081)).toMatchObject({
      state: 'open',
      detail: 'no input filter in the nftables ruleset',
    });
  });

  it('says unknown, never open, where a chain jumps elsewhere or matches what it cannot read', () => {
    expect(judgeRuleset(doc(chain('drop'), rule({ jump: { target: 'ufw-before-input' } })), 1081).state).toBe(
      'unknown',
    );
    const mark = rule({ match: { op: '==', left: { meta: { key: 'mark' } }, right: 1 } }, { accept: null });
    expect(judgeRuleset(doc(chain('drop'), mark), 1081).state).toBe('unknown');
  });
});

describe('"Allow in the firewall": the command each firewall takes to let the shared port in from the LAN', () => {
  it('names ufw, firewalld (now and across reboots) or a rule at the top of the nftables chain that drops it', () => {
    const blocked = (tool: 'ufw' | 'firewalld' | 'nftables') => ({ tool, state: 'blocked' as const, detail: '' });
    expect(openingCommands(blocked('ufw'), 1081, '192.168.1.0/24')).toEqual([
      ['ufw', 'allow', 'proto', 'tcp', 'from', '192.168.1.0/24', 'to', 'any', 'port', '1081'],
    ]);
    expect(openingCommands(blocked('firewalld'), 1081, '192.168.1.0/24')).toEqual([
      ['firewall-cmd', '--add-port=1081/tcp'],
      ['firewall-cmd', '--permanent', '--add-port=1081/tcp'],
    ]);
    const nft = { ...blocked('nftables'), chain: { family: 'inet', table: 'filter', name: 'input' } };
    expect(openingCommands(nft, 1081, 'fd00::/64')).toEqual([
      [
        'nft',
        'insert',
        'rule',
        'inet',
        'filter',
        'input',
        'ip6',
        'saddr',
        'fd00::/64',
        'tcp',
        'dport',
        '1081',
        'accept',
      ],
    ]);
  });

  it('names nothing where nothing blocks or Gatehop cannot tell', () => {
    expect(openingCommands({ tool: 'nftables', state: 'open', detail: '' }, 1081, '10.0.0.0/8')).toBeNull();
    expect(openingCommands({ tool: null, state: 'unknown', detail: '' }, 1081, '10.0.0.0/8')).toBeNull();
  });
});
