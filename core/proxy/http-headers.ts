/** RFC 9110 §7.6.1 hop-by-hop fields, plus the proxy-only ones clients send. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Drops hop-by-hop fields and every field the Connection header names, keeping the order and case
 * of the rest (`rawHeaders` form: name, value, name, value...). `keep` names fields to pass anyway
 * (an Upgrade request must carry Connection and Upgrade through).
 */
export function stripHopByHop(rawHeaders: readonly string[], keep: ReadonlySet<string> = new Set()): string[] {
  const named = new Set<string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'connection') {
      for (const token of rawHeaders[i + 1]!.split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!keep.has(name) && (HOP_BY_HOP.has(name) || named.has(name))) continue;
    out.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return out;
}

/** Replaces (or adds) the Host field: a proxy must use the absolute URI's authority (RFC 9112 §3.2.2). */
export function withHost(rawHeaders: string[], host: string): string[] {
  const out: string[] = ['Host', host];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'host') out.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return out;
}

/** `user:password` from `Proxy-Authorization: Basic ...`, or null when absent or malformed. */
export function parseBasicAuth(value: string | undefined): { username: string; password: string } | null {
  if (!value) return null;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(value);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Parses a CONNECT authority `host:port` or `[v6]:port`. */
export function parseAuthority(text: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:/\s[\]]+)):(\d{1,5})$/.exec(text);
  if (!m) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  return { host: (m[1] ?? m[2])!, port };
}
