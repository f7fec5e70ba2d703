/**
 * The honesty checks of one node, through its own tunnel (in the spirit of Tor's exitmap): DNS
 * canaries and NXDOMAIN at the node's resolver, plain HTTP compared byte for byte, TLS against the
 * OS roots. Only a positive mismatch is a finding; a timeout, a refusal or a node that cannot reach
 * the target is inconclusive, never held against it (trust-notes §3: "treat network failure as
 * unknown"). Where an answer looks wrong, a second opinion is asked before it counts: DNS over
 * HTTPS through the same tunnel for DNS, the same URL fetched directly (never through another
 * node) for HTTP.
 */
import { randomInt } from 'node:crypto';
import { ErrorCodes, isGatehopError } from '../common/index.js';
import { classifyAddress } from '../reach/index.js';
import type { Egress } from '../contracts/index.js';
import type { DohServer, HonestyOptions, HttpCheck } from './options.js';
import {
  dnsOverHttps,
  dnsOverUdp,
  browserGet,
  tlsHandshake,
  type DnsAnswer,
  type Exchange,
  type HttpResponse,
  type TlsOutcome,
} from './through-tunnel.js';
import type { CheckOutcome, HonestyEvidence } from './types.js';

/** What a check runs through: the node's tunnel, its resolvers, and the way direct for a second opinion. */
export interface CheckContext {
  tunnel: Egress;
  /** DoH resolvers for a second opinion, asked through the same tunnel. */
  doh: readonly DohServer[];
  /** The resolvers the tunnel gave (pushed by OpenVPN, SecureNAT's by DHCP); none: 1.1.1.1 through the tunnel. */
  resolvers: readonly string[];
  /**
   * The host network: a URL with a published answer is fetched here too, and a changed answer
   * that this network shows as well is the reference's age, not the node's doing (null: none).
   */
  direct: Egress | null;
  /**
   * Another node that passed its checks, opened at the first URL that needs it: the reference copy
   * of a URL with no published answer (#59: never the user's own network alone, where a censor
   * or a page that prints the time would make every node look like it tampers). Null: none.
   */
  second: { egress(): Promise<Egress | null>; close(): Promise<void> } | null;
  options: HonestyOptions;
  x: Exchange;
}

/** Opens a tunnel to another node that passed its checks, for a reference copy (null: none now). */
export type SecondNode = () => Promise<{ egress: Egress; close(): Promise<void> } | null>;

/** OpenSSL's words for a chain that does not reach a trusted root: someone else's CA in the middle. */
const INTERCEPTION = new Set([
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

const MAX_SHOWN = 200;

const why = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, MAX_SHOWN);

/** A second opinion on a name: DNS over HTTPS through the same tunnel, one resolver after another. */
class DohReference {
  readonly #answers = new Map<string, Promise<DnsAnswer | { interception: CheckOutcome } | null>>();

  constructor(private readonly c: CheckContext) {}

  /** The answer, an interception seen on the way, or null when no DoH resolver could be asked. */
  ask(name: string): Promise<DnsAnswer | { interception: CheckOutcome } | null> {
    let p = this.#answers.get(name);
    if (!p) this.#answers.set(name, (p = this.#ask(name)));
    return p;
  }

  async #ask(name: string): Promise<DnsAnswer | { interception: CheckOutcome } | null> {
    for (const doh of this.c.doh) {
      try {
        return await dnsOverHttps(this.c.tunnel, doh, name, this.c.x);
      } catch (err) {
        const outcome = (err as { outcome?: TlsOutcome }).outcome;
        if (isGatehopError(err, ErrorCodes.NODE_CERT_REFUSED) && outcome && isInterception(outcome))
          return {
            interception: {
              check: 'tls',
              target: `${doh.serverName} (${doh.address}:${doh.port})`,
              result: 'finding',
              evidence: tlsEvidence(`${doh.serverName} (${doh.address}:${doh.port})`, outcome),
            },
          };
        this.c.x.signal.throwIfAborted();
      }
    }
    return null;
  }
}

function isInterception(o: TlsOutcome): boolean {
  return !o.trusted && o.error !== null && INTERCEPTION.has(o.error);
}

function tlsEvidence(target: string, o: TlsOutcome): HonestyEvidence {
  return {
    check: 'tls',
    target,
    expected: 'a certificate that chains to the OS roots',
    got: `a certificate for ${o.subject || 'no name'} from ${o.issuer} (${o.error})`,
  };
}

/** DNS: every canary at the node's resolvers, then random names that must not exist. */
export async function checkDns(c: CheckContext, ref: DohReference): Promise<CheckOutcome[]> {
  const resolvers = (c.resolvers.length > 0 ? c.resolvers : ['1.1.1.1']).slice(0, 2);
  const out: CheckOutcome[] = [];
  for (const canary of c.options.dns.canaries)
    for (const server of resolvers) out.push(await checkCanary(c, ref, server, canary));
  const zone = c.options.dns.nxdomainZone;
  if (zone) out.push(await checkNxdomain(c, ref, resolvers[0]!, zone));
  return out;
}

async function checkCanary(
  c: CheckContext,
  ref: DohReference,
  server: string,
  canary: { name: string; addresses: string[] },
): Promise<CheckOutcome> {
  const target = `${canary.name} at ${server}`;
  let ans: DnsAnswer;
  try {
    ans = await dnsOverUdp(c.tunnel, server, canary.name, c.x);
  } catch (err) {
    c.x.signal.throwIfAborted();
    return { check: 'dns', target, result: 'inconclusive', note: why(err) };
  }
  if (ans.addresses.length === 0)
    // A public name refused (blocked where the node is): not a lie about where it is.
    return { check: 'dns', target, result: 'inconclusive', note: `answered ${ans.rcode} with no address` };
  const expected = new Set(canary.addresses);
  const extra = ans.addresses.filter((a) => !expected.has(a));
  if (extra.length === 0) return { check: 'dns', target, result: 'pass' };
  const evidence: HonestyEvidence = {
    check: 'dns',
    target,
    expected: canary.addresses.join(', '),
    got: ans.addresses.join(', ').slice(0, MAX_SHOWN),
  };
  // A private or reserved address for a public name needs no second opinion.
  const publicExpected = canary.addresses.every((a) => classifyAddress(a) === 'public');
  if (publicExpected && extra.some((a) => classifyAddress(a) !== 'public'))
    return {
      check: 'dns',
      target,
      result: 'finding',
      evidence: { ...evidence, got: `${evidence.got} (a private address)` },
    };
  const second = await ref.ask(canary.name);
  if (second && 'interception' in second) return second.interception;
  if (second && extra.every((a) => second.addresses.includes(a)))
    return {
      check: 'dns',
      target,
      result: 'pass',
      note: `DoH gives ${extra.join(', ')} too: the published set has changed`,
    };
  return { check: 'dns', target, result: 'finding', evidence };
}

async function checkNxdomain(c: CheckContext, ref: DohReference, server: string, zone: string): Promise<CheckOutcome> {
  const name = `${randomLabel()}.${zone}`;
  const target = `${name} at ${server}`;
  let ans: DnsAnswer;
  try {
    ans = await dnsOverUdp(c.tunnel, server, name, c.x);
  } catch (err) {
    c.x.signal.throwIfAborted();
    return { check: 'nxdomain', target, result: 'inconclusive', note: why(err) };
  }
  if (ans.addresses.length === 0) return { check: 'nxdomain', target, result: 'pass' };
  // The zone may have a wildcard after all: only DoH saying "no such name" makes it a finding.
  const second = await ref.ask(name);
  if (second && 'interception' in second) return second.interception;
  if (!second)
    return { check: 'nxdomain', target, result: 'inconclusive', note: 'no DoH resolver answered to compare' };
  if (second.addresses.length > 0) return { check: 'nxdomain', target, result: 'pass', note: `${zone} has a wildcard` };
  return {
    check: 'nxdomain',
    target,
    result: 'finding',
    evidence: { check: 'nxdomain', target, expected: 'NXDOMAIN (no such name)', got: ans.addresses.join(', ') },
  };
}

/** 16 random lower-case letters: a name nobody registered. */
function randomLabel(): string {
  return Array.from({ length: 16 }, () => String.fromCharCode(97 + randomInt(26))).join('');
}

/** Plain HTTP: each URL through the tunnel against its published answer, or against the direct copy. */
export async function checkHttp(c: CheckContext): Promise<CheckOutcome[]> {
  const out: CheckOutcome[] = [];
  for (const spec of c.options.http) out.push(await checkOneUrl(c, spec));
  return out;
}

async function checkOneUrl(c: CheckContext, spec: HttpCheck): Promise<CheckOutcome> {
  const target = spec.url;
  let got: HttpResponse;
  try {
    got = await browserGet(c.tunnel, spec.url, c.x);
  } catch (err) {
    c.x.signal.throwIfAborted();
    return { check: 'http', target, result: 'inconclusive', note: why(err) };
  }
  const published = spec.status !== undefined ? { status: spec.status, body: Buffer.from(spec.body ?? '') } : null;
  let direct: HttpResponse | null | undefined;
  const reference = async (): Promise<HttpResponse | null> => {
    if (direct !== undefined) return direct;
    try {
      direct = c.direct ? await browserGet(c.direct, spec.url, { signal: c.x.signal, meter: c.x.meter }) : null;
    } catch {
      c.x.signal.throwIfAborted();
      direct = null;
    }
    return direct;
  };
  const expected = published ?? (await secondCopy(c, spec.url));
  if (!expected)
    return {
      check: 'http',
      target,
      result: 'inconclusive',
      note: published ? 'no reference copy could be fetched' : 'no second node that passed its checks to compare with',
    };
  if (sameResponse(got, expected)) return { check: 'http', target, result: 'pass' };
  // Before it counts: the same URL fetched directly. The same changed answer there means the
  // published one is out of date (or this network changes it), not the node.
  if (published) {
    const d = await reference();
    if (d && sameResponse(got, d))
      return {
        check: 'http',
        target,
        result: 'inconclusive',
        note: 'the same answer directly: the reference is out of date',
      };
  } else {
    // A page that is not the same twice (a clock, a counter, an ad) proves nothing: asked again
    // through the second node, it must come back as it did before it counts.
    const again = await secondCopy(c, spec.url);
    if (!again || !sameResponse(again, expected))
      return {
        check: 'http',
        target,
        result: 'inconclusive',
        note: 'the page is not the same twice through another node: no reference to compare with',
      };
  }
  return {
    check: 'http',
    target,
    result: 'finding',
    evidence: { check: 'http', target, expected: describe(expected), got: describe(got) },
  };
}

/** The URL through a second node that passed its checks; null when there is none or it failed. */
async function secondCopy(c: CheckContext, url: string): Promise<HttpResponse | null> {
  try {
    const egress = await c.second?.egress();
    return egress ? await browserGet(egress, url, c.x) : null;
  } catch {
    c.x.signal.throwIfAborted();
    return null;
  }
}

function sameResponse(a: { status: number; body: Buffer }, b: { status: number; body: Buffer }): boolean {
  const trim = (x: Buffer): string => x.toString('latin1').replace(/\s+$/, '');
  return a.status === b.status && trim(a.body) === trim(b.body);
}

function describe(r: { status: number; body: Buffer }): string {
  const text = r.body.toString('utf8').replace(/\s+/g, ' ').trim();
  return `HTTP ${r.status}, ${r.body.length} bytes${text ? `: ${JSON.stringify(text.length > 160 ? `${text.slice(0, 80)} … ${text.slice(-60)}` : text)}` : ''}`;
}

/** TLS: each name through the tunnel, its certificate against the OS roots. */
export async function checkTls(c: CheckContext): Promise<CheckOutcome[]> {
  const out: CheckOutcome[] = [];
  for (const spec of c.options.tls) {
    const target = `${spec.host}:${spec.port}`;
    try {
      const { tls, outcome } = await tlsHandshake(c.tunnel, spec.address ?? spec.host, spec.port, spec.host, c.x);
      tls.destroy();
      if (outcome.trusted) out.push({ check: 'tls', target, result: 'pass' });
      else if (isInterception(outcome))
        out.push({ check: 'tls', target, result: 'finding', evidence: tlsEvidence(target, outcome) });
      // A trusted chain for another name, an expired certificate: odd, but not someone's own CA.
      else
        out.push({ check: 'tls', target, result: 'inconclusive', note: `${outcome.error} (from ${outcome.issuer})` });
    } catch (err) {
      c.x.signal.throwIfAborted();
      out.push({ check: 'tls', target, result: 'inconclusive', note: why(err) });
    }
  }
  return out;
}

export { DohReference };
