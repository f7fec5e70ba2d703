import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { LeakReport } from '../api/index.js';
import type { Logger, NetworkSnapshot } from '../common/index.js';
import { httpGet, type Dialer } from '../reach/index.js';
import { parseExit } from './exit-check.js';

export interface LeakTestDeps {
  /** Where the exit address is asked (exitCheck.url, else leakTest.exitUrl); null: not tested. */
  exitUrl: () => string | null;
  /** The resolver echo with `{nonce}` (leakTest.resolverUrl); null: not tested. */
  resolverUrl: () => string | null;
  stunUrl: () => string | null;
  /** A way out through the active tunnel, or null while none is up. */
  dialer: () => Dialer | null;
  activeNodeId: () => string | null;
  encryptedDns: () => boolean;
  /** Whether the OS proxy setting points at Gatehop (null: cannot be told). */
  systemProxyOn: () => Promise<boolean | null>;
  snapshot: () => NetworkSnapshot;
  /** /proc/net/ipv6_route's text (Linux), or null where there is none. */
  readIpv6Routes?: () => string | null;
  logger: Logger;
}

const ASK_MS = 10_000;
const MAX_BODY = 16 * 1024;

/** The resolver's address an echo service names: JSON `dns.ip` (ip-api's EDNS echo), `resolver` or `ip`, or the first address in text. */
export function parseResolver(body: string): string | null {
  let j: unknown;
  try {
    j = JSON.parse(body);
  } catch {
    /* not JSON: plain text */
  }
  if (j && typeof j === 'object') {
    const o = j as Record<string, unknown>;
    const dns = o.dns && typeof o.dns === 'object' ? (o.dns as Record<string, unknown>) : undefined;
    const v = [dns?.ip, o.resolver, o.ip].find((x): x is string => typeof x === 'string' && isIP(x) !== 0);
    if (v) return v;
  }
  return parseExit(body).address;
}

/** A global IPv6 address of this computer (2000::/3), and whether an IPv6 default route leaves by a real interface. */
export function ipv6Facts(
  s: NetworkSnapshot,
  routes: string | null,
): { address: string | null; defaultRoute: boolean | null } {
  const address =
    s.addresses.map((a) => a.split(' ')[1] ?? '').find((a) => isIP(a) === 6 && /^[23][0-9a-f]{0,3}:/i.test(a)) ?? null;
  if (routes === null) return { address, defaultRoute: null };
  const defaultRoute = routes
    .split('\n')
    .some((l) => l.startsWith('00000000000000000000000000000000 00 ') && l.trim().split(/\s+/).at(-1) !== 'lo');
  return { address, defaultRoute };
}

function readIpv6RoutesOfLinux(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    return readFileSync('/proc/net/ipv6_route', 'utf8');
  } catch {
    return null;
  }
}

/**
 * The core's part of the leak self-test (#64), when the user asks: where sites see traffic through
 * the active node come from (an address echo through it), which resolver looked up a name of the
 * test's own (a resolver echo through it, a fresh name each time so no cache answers), and whether
 * this computer has an IPv6 way out that programs not using the proxy would take. Gatehop's tunnels
 * carry IPv4 only (a flow to an IPv6 address through a node is refused, never sent around it), so
 * the IPv6 finding is about the rest of the computer. The WebRTC part runs in the window.
 */
export async function runLeakTest(d: LeakTestDeps): Promise<LeakReport> {
  const dialer = d.dialer();
  const nodeId = d.activeNodeId();
  const noTunnel = 'no tunnel is up: connect to a node first';
  const exitUrl = d.exitUrl();
  const resolverUrl = d.resolverUrl();
  const ask = async (url: string) => {
    if (!dialer) throw new Error(noTunnel);
    const r = await httpGet(url, { dialer, timeoutMs: ASK_MS, maxBytes: MAX_BODY });
    if (r.status < 200 || r.status >= 300) throw new Error(`${new URL(url).host} answered ${r.status}`);
    return r.body;
  };
  const [exit, resolver, systemProxy] = await Promise.all([
    exitUrl
      ? ask(exitUrl).then(
          (body) => {
            const p = parseExit(body);
            return { ...p, error: p.address ? null : `${new URL(exitUrl).host} answered no address` };
          },
          (err: Error) => ({ address: null, country: null, error: err.message }),
        )
      : { address: null, country: null, error: null },
    resolverUrl
      ? (async () => {
          // A name nobody asked before: only the resolver that looks it up now can be the one the echo names.
          const url = resolverUrl.replace('{nonce}', randomBytes(16).toString('hex'));
          try {
            const address = parseResolver(await ask(url));
            return {
              address,
              error: address ? null : `${new URL(url).host.split('.').slice(1).join('.')} named no resolver`,
            };
          } catch (err) {
            return { address: null, error: (err as Error).message };
          }
        })()
      : { address: null, error: null },
    d.systemProxyOn().catch(() => null),
  ]);
  const report: LeakReport = {
    at: Date.now(),
    nodeId: dialer ? nodeId : null,
    exit: { url: exitUrl, ...exit },
    resolver: { url: resolverUrl, encrypted: d.encryptedDns(), ...resolver },
    ipv6: ipv6Facts(d.snapshot(), (d.readIpv6Routes ?? readIpv6RoutesOfLinux)()),
    systemProxy,
    stunUrl: d.stunUrl(),
  };
  d.logger.info(
    {
      event: 'leak-test',
      nodeId: report.nodeId,
      exit: report.exit.address,
      resolver: report.resolver.address,
      ipv6: report.ipv6.address !== null && report.ipv6.defaultRoute !== false,
    },
    `leak test: exit ${report.exit.address ?? report.exit.error ?? 'not tested'}, resolver ${report.resolver.address ?? report.resolver.error ?? 'not tested'}`,
  );
  return report;
}
