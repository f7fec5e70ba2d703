import { execFile } from 'node:child_process';
import { ErrorCodes, GatehopError } from '../common/index.js';

/** What this computer's firewall does with the shared port, as far as Gatehop can read it. */
export interface FirewallState {
  /** Which firewall answered: nftables' ruleset, ufw or firewalld; null when none could be read. */
  tool: 'nftables' | 'ufw' | 'firewalld' | null;
  /** open: lets the port in; blocked: does not; unknown: could not tell (said in `detail`). */
  state: 'open' | 'blocked' | 'unknown';
  detail: string;
  /** nftables: the chain that drops the port (where a rule letting it in goes). */
  chain?: { family: string; table: string; name: string };
}

/** Runs a command, resolving its stdout, or null when it is missing, refused or failed. */
export type RunCommand = (file: string, args: string[]) => Promise<string | null>;

const runCommand: RunCommand = (file, args) =>
  new Promise((resolve) => {
    execFile(file, args, { timeout: 5_000, maxBuffer: 8 << 20 }, (err, stdout) => resolve(err ? null : stdout));
  });

/**
 * Whether the firewall lets TCP `port` in (Linux): ufw's own status, or firewalld's ports, or the
 * nftables ruleset read and judged chain by chain. Conservative: a chain that jumps elsewhere
 * before deciding, or rules it cannot read, make it `unknown`, never `open`. Reading nftables
 * needs root (a desktop user gets `unknown`, with the way to open the port said by the window).
 */
export async function firewallState(port: number, run: RunCommand = runCommand): Promise<FirewallState> {
  if (process.platform !== 'linux')
    return { tool: null, state: 'unknown', detail: 'Gatehop reads the firewall on Linux only' };
  const ufw = await run('ufw', ['status']);
  if (ufw !== null && /Status: active/.test(ufw)) {
    const allowed = ufw.split('\n').some((l) => new RegExp(`^${port}(/tcp)?\\s+ALLOW`).test(l.trim()));
    return {
      tool: 'ufw',
      state: allowed ? 'open' : 'blocked',
      detail: allowed ? `ufw allows ${port}` : `ufw is active and does not allow ${port}`,
    };
  }
  const firewalld = await run('firewall-cmd', ['--state']);
  if (firewalld !== null && firewalld.trim() === 'running') {
    const ports = (await run('firewall-cmd', ['--list-ports'])) ?? '';
    const allowed = ports.split(/\s+/).includes(`${port}/tcp`);
    return {
      tool: 'firewalld',
      state: allowed ? 'open' : 'blocked',
      detail: allowed ? `firewalld allows ${port}/tcp` : `firewalld is running and does not list ${port}/tcp`,
    };
  }
  const json = await run('nft', ['-j', 'list', 'ruleset']);
  if (json === null)
    return { tool: null, state: 'unknown', detail: 'the firewall could not be read (nftables needs root)' };
  try {
    return judgeRuleset(JSON.parse(json) as NftDoc, port);
  } catch (err) {
    return { tool: 'nftables', state: 'unknown', detail: `the ruleset could not be read: ${(err as Error).message}` };
  }
}

interface NftDoc {
  nftables: Array<Record<string, NftObject>>;
}
interface NftObject {
  family?: string;
  table?: string;
  name?: string;
  chain?: string;
  hook?: string;
  type?: string;
  policy?: string;
  expr?: Array<Record<string, unknown>>;
}

type Verdict = 'accept' | 'drop' | 'other' | null;

/** The ruleset's input chains, each judged for a new TCP connection to `port` from the LAN. */
export function judgeRuleset(doc: NftDoc, port: number): FirewallState {
  const chains = doc.nftables.flatMap((o) => (o.chain?.hook === 'input' && o.chain.type === 'filter' ? [o.chain] : []));
  if (chains.length === 0)
    return { tool: 'nftables', state: 'open', detail: 'no input filter in the nftables ruleset' };
  const rules = doc.nftables.flatMap((o) => (o.rule ? [o.rule] : []));
  for (const chain of chains) {
    let decided: Verdict = null;
    for (const rule of rules) {
      if (rule.family !== chain.family || rule.table !== chain.table || rule.chain !== chain.name) continue;
      const v = verdictFor(rule.expr ?? [], port);
      if (v === 'other')
        return {
          tool: 'nftables',
          state: 'unknown',
          detail: `chain ${chain.table}/${chain.name} jumps or does more than Gatehop reads`,
        };
      if (v !== null) {
        decided = v;
        break;
      }
    }
    const final = decided ?? (chain.policy === 'drop' ? 'drop' : 'accept');
    if (final === 'drop')
      return {
        tool: 'nftables',
        state: 'blocked',
        detail: `chain ${chain.table}/${chain.name} drops port ${port}`,
        chain: { family: chain.family ?? 'inet', table: chain.table ?? '', name: chain.name ?? '' },
      };
  }
  return { tool: 'nftables', state: 'open', detail: `nftables lets port ${port} in` };
}

/**
 * What one rule does with a new TCP connection to `port`: null when it does not apply (it matches
 * something such a connection is not, like loopback or an established state), its verdict when it
 * applies, 'other' when Gatehop cannot tell (a jump, a match it does not read).
 */
function verdictFor(expr: Array<Record<string, unknown>>, port: number): Verdict {
  let verdict: Verdict = null;
  for (const e of expr) {
    if ('accept' in e) verdict = 'accept';
    else if ('drop' in e || 'reject' in e) verdict = 'drop';
    else if ('jump' in e || 'goto' in e) return 'other';
    else if ('match' in e) {
      const applies = matchApplies(e.match as { op: string; left: unknown; right: unknown }, port);
      if (applies === false) return null;
      if (applies === 'unknown') return 'other';
    } else if (!('counter' in e) && !('log' in e) && !('limit' in e)) return 'other';
  }
  return verdict;
}

function matchApplies(m: { op: string; left: unknown; right: unknown }, port: number): boolean | 'unknown' {
  const left = m.left as Record<string, Record<string, string>>;
  const right = m.right;
  const eq = m.op === '==' || m.op === 'in';
  if (left.payload?.field === 'dport' && left.payload.protocol === 'tcp') return eq === covers(right, port);
  if (left.payload?.field === 'dport') return false; // udp, another protocol
  if (left.payload?.field === 'saddr') return true; // from some addresses: taken as the LAN's
  if (left.meta?.key === 'l4proto') return eq === covers(right, 'tcp');
  if (left.meta?.key === 'iif' || left.meta?.key === 'iifname') return right === 'lo' ? !eq : 'unknown';
  if (left.ct?.key === 'state') return eq === covers(right, 'new');
  return 'unknown';
}

function covers(right: unknown, value: number | string): boolean {
  if (Array.isArray(right)) return right.includes(value);
  if (typeof right === 'object' && right !== null) {
    const r = right as { set?: unknown[]; range?: [number, number] };
    if (r.set) return r.set.some((x) => covers(x, value));
    if (r.range && typeof value === 'number') return value >= r.range[0] && value <= r.range[1];
  }
  return right === value;
}

/**
 * The commands that let TCP `port` in from `network` (the LAN's ADDRESS/PREFIX) on the firewall
 * that blocks it: ufw's allow, firewalld's port (now and across reboots), or a rule at the top of
 * the nftables chain that drops it. null where Gatehop cannot say (unknown, or nothing blocks).
 */
export function openingCommands(fw: FirewallState, port: number, network: string): string[][] | null {
  if (fw.state !== 'blocked') return null;
  const family = network.includes(':') ? 'ip6' : 'ip';
  if (fw.tool === 'ufw') return [['ufw', 'allow', 'proto', 'tcp', 'from', network, 'to', 'any', 'port', String(port)]];
  if (fw.tool === 'firewalld')
    return [
      ['firewall-cmd', `--add-port=${port}/tcp`],
      ['firewall-cmd', '--permanent', `--add-port=${port}/tcp`],
    ];
  if (fw.tool === 'nftables' && fw.chain) {
    const { family: f, table, name } = fw.chain;
    return [
      ['nft', 'insert', 'rule', f, table, name, family, 'saddr', network, 'tcp', 'dport', String(port), 'accept'],
    ];
  }
  return null;
}

/** Runs one opening command to its end (pkexec waits for the password: up to two minutes). */
export function runToEnd(argv: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(argv[0]!, argv.slice(1), { timeout: 120_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const why =
        (err as NodeJS.ErrnoException).code === 'ENOENT' ? `${argv[0]} is not installed` : stderr.trim() || err.message;
      reject(new GatehopError(ErrorCodes.SHARE_FIREWALL_FAILED, `${argv.join(' ')}: ${why}`, { cause: err }));
    });
  });
}
