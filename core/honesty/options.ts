import { z } from 'zod';
import { wholeNumber } from '../common/index.js';

/**
 * A DNS-over-HTTPS resolver dialled by address (RFC 8484): the honesty checks' second opinion on a
 * name, and with `privacy.encryptedDns` every name resolved in a tunnel. Its certificate must be
 * valid for `serverName` under the OS roots.
 */
export const dohServerSchema = z
  .object({
    address: z.string().min(1),
    serverName: z.string().min(1),
    port: z.number().int().min(1).max(65535).default(443),
    path: z.string().startsWith('/').default('/dns-query'),
  })
  .strict();
export type DohServer = z.infer<typeof dohServerSchema>;

/** Cloudflare's and Google's public resolvers by address (shared/docs/trust-notes.md §6). */
export const DEFAULT_DOH_SERVERS: readonly DohServer[] = [
  { address: '1.1.1.1', serverName: 'cloudflare-dns.com', port: 443, path: '/dns-query' },
  { address: '8.8.8.8', serverName: 'dns.google', port: 443, path: '/dns-query' },
];

const httpUrl = z
  .string()
  .url()
  .regex(/^http:\/\//i, 'must be a plain http:// URL (the check is that nobody changes it on the way)');

/**
 * What the honesty checks ask and how often (config `honesty:`). The defaults are resources whose
 * answers are fixed and published (shared/docs/trust-notes.md §4–§6): captive-portal checks of
 * the OS vendors and browsers, public resolvers' own names, public DoH by address. Nothing whose
 * answer varies by place (CDN names) is a DNS canary: a false "tampers" is worse than a missed one.
 */
export const honestyOptionsSchema = z
  .object({
    /** Check nodes at all (Settings → "Check nodes for tampering"). */
    enabled: z.boolean().default(true),
    /** A node checked within this is not checked again (at most daily). */
    recheckMs: wholeNumber(60_000, 24 * 3_600_000),
    /** A node whose check concluded nothing is asked again after this, when it is used. */
    retryUncheckedMs: wholeNumber(60_000, 3_600_000),
    /**
     * The background pace: while the proxy is in use, one node not checked yet (the best-ranked
     * first, then the rest of the pool) is checked through a tunnel of its own every this many ms;
     * 0 checks only nodes in use. A minute: a 100-node pool in about 100 minutes of use, at about
     * one tunnel handshake and 40–60 KB a minute (bench/README.md, "Honesty checks").
     */
    sweepEveryMs: wholeNumber(0, 60_000),
    /**
     * A node that starts carrying sessions is checked at a random moment within this, through its
     * tunnel, not at once (#59: a check at the switch, before any user traffic, is easy for a node
     * to spot and spare). 0: at once.
     */
    inUseWithinMs: z.number().int().min(0).max(3_600_000).default(300_000),
    /** One whole check's deadline; each part has its share. */
    timeoutMs: z.number().int().min(2_000).max(120_000).default(20_000),
    /** What one check may read through the tunnel (bytes, all parts together). */
    maxBytes: wholeNumber(16 * 1024, 512 * 1024),
    dns: z
      .object({
        /** Names with fixed, published addresses: any other answer (not confirmed by DoH) is tampering. */
        canaries: z
          .array(z.object({ name: z.string().min(1), addresses: z.array(z.string().min(1)).min(1) }).strict())
          .max(8)
          .default([
            { name: 'one.one.one.one', addresses: ['1.1.1.1', '1.0.0.1'] },
            { name: 'dns.google', addresses: ['8.8.8.8', '8.8.4.4'] },
          ]),
        /**
         * Random names under this zone must not exist: an address for one (where DoH says there is
         * none) is a resolver that rewrites NXDOMAIN. null turns that check off.
         */
        nxdomainZone: z.string().min(1).nullable().default('example.com'),
      })
      .strict()
      .prefault({}),
    /**
     * Plain-HTTP resources compared byte for byte. With `status`/`body` the published answer; without,
     * the answer Gatehop gets directly (never through a node) is the reference.
     */
    http: z
      .array(
        z
          .object({ url: httpUrl, status: z.number().int().min(100).max(599).optional(), body: z.string().optional() })
          .strict(),
      )
      .max(8)
      .default([
        { url: 'http://connectivitycheck.gstatic.com/generate_204', status: 204, body: '' },
        { url: 'http://www.msftconnecttest.com/connecttest.txt', status: 200, body: 'Microsoft Connect Test' },
        { url: 'http://detectportal.firefox.com/success.txt', status: 200, body: 'success' },
        // An HTML page (text/html): an injector that rewrites only pages must meet one (#59).
        {
          url: 'http://captive.apple.com/hotspot-detect.html',
          status: 200,
          body: '<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>',
        },
      ]),
    /** HTTPS names whose certificate must chain to the OS roots through the node (dialled at `address` when given). */
    tls: z
      .array(
        z
          .object({
            host: z.string().min(1),
            port: z.number().int().min(1).max(65535).default(443),
            address: z.string().min(1).optional(),
          })
          .strict(),
      )
      .max(8)
      .default([
        { host: 'www.google.com', port: 443 },
        { host: 'www.wikipedia.org', port: 443 },
      ]),
  })
  .strict();

export type HonestyOptions = z.infer<typeof honestyOptionsSchema>;
export type HttpCheck = HonestyOptions['http'][number];
export type TlsCheck = HonestyOptions['tls'][number];

export function honestyOptions(input: z.input<typeof honestyOptionsSchema> = {}): HonestyOptions {
  return honestyOptionsSchema.parse(input);
}
