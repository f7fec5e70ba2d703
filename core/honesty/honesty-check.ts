import type { Egress } from '../contracts/index.js';
import { checkDns, checkHttp, checkTls, DohReference, type CheckContext, type SecondNode } from './checks.js';
import type { DohServer, HonestyOptions } from './options.js';
import { ByteMeter } from './through-tunnel.js';
import {
  isTampering,
  VERDICT_GRAVITY,
  type CheckKind,
  type CheckOutcome,
  type HonestyEvidence,
  type HonestyVerdict,
  type Tampering,
} from './types.js';

/** What one full check of a node found. */
export interface HonestyReport {
  verdict: HonestyVerdict;
  evidence: HonestyEvidence[];
  inconclusive: string[];
  outcomes: CheckOutcome[];
  durationMs: number;
  bytes: number;
}

const VERDICT_OF: Readonly<Record<CheckKind, Tampering>> = {
  dns: 'dns-tampering',
  nxdomain: 'dns-tampering',
  http: 'http-tampering',
  tls: 'tls-interception',
};

/**
 * One full check through the node's own tunnel, within the time and byte budget of `options`:
 * DNS, HTTP and TLS side by side. The verdict is the gravest finding; with none, `honest` when
 * every kind of check that is configured passed at least once, else `unchecked` (the node could
 * not reach the targets, or the budget ran out: said in `inconclusive`).
 */
export async function checkNodeHonesty(
  tunnel: Egress,
  resolvers: readonly string[],
  options: HonestyOptions,
  o: { direct: Egress | null; doh: readonly DohServer[]; signal?: AbortSignal; second?: SecondNode },
): Promise<HonestyReport> {
  const started = Date.now();
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, deadline]) : deadline;
  const meter = new ByteMeter(options.maxBytes);
  const c: CheckContext = {
    tunnel,
    resolvers,
    doh: o.doh,
    direct: o.direct,
    second: o.second ? lazySecond(o.second) : null,
    options,
    x: { signal, meter },
  };
  const ref = new DohReference(c);
  const parts: Array<[string, Promise<CheckOutcome[]>]> = [
    ['dns', checkDns(c, ref)],
    ['http', checkHttp(c)],
    ['tls', checkTls(c)],
  ];
  const outcomes: CheckOutcome[] = [];
  const inconclusive: string[] = [];
  for (const [kind, p] of parts) {
    try {
      outcomes.push(...(await p));
    } catch (err) {
      // The budget ran out (or the tunnel closed) in the middle of this kind: what it found so far is lost.
      inconclusive.push(`${kind}: ${(err as Error).message}`);
    }
  }
  o.signal?.throwIfAborted();
  for (const x of outcomes) if (x.result === 'inconclusive') inconclusive.push(`${x.target}: ${x.note ?? 'no answer'}`);
  const findings = outcomes.filter((x) => x.result === 'finding');
  const evidence = findings.map((f) => f.evidence!).filter(Boolean);
  let verdict: HonestyVerdict = 'unchecked';
  for (const f of findings) {
    const v = VERDICT_OF[f.check];
    if (!isTampering(verdict) || VERDICT_GRAVITY[v] > VERDICT_GRAVITY[verdict]) verdict = v;
  }
  if (!isTampering(verdict)) {
    const asked = (k: CheckKind[]): boolean => outcomes.some((x) => k.includes(x.check));
    const passed = (k: CheckKind[]): boolean => outcomes.some((x) => k.includes(x.check) && x.result === 'pass');
    const kinds: CheckKind[][] = [
      ...(options.dns.canaries.length > 0 || options.dns.nxdomainZone ? [['dns', 'nxdomain'] as CheckKind[]] : []),
      ...(options.http.length > 0 ? [['http'] as CheckKind[]] : []),
      ...(options.tls.length > 0 ? [['tls'] as CheckKind[]] : []),
    ];
    verdict = kinds.every((k) => asked(k) && passed(k)) ? 'honest' : 'unchecked';
  }
  await c.second?.close();
  return { verdict, evidence, inconclusive, outcomes, durationMs: Date.now() - started, bytes: meter.n };
}

/** Opens the second node's tunnel once, at the first URL that needs it; closes it if it was opened. */
function lazySecond(open: SecondNode): NonNullable<CheckContext['second']> {
  let opened: ReturnType<SecondNode> | null = null;
  return {
    egress: async () => {
      opened ??= open();
      return (await opened)?.egress ?? null;
    },
    close: async () => {
      const t = await opened?.catch(() => null);
      await t?.close();
    },
  };
}
