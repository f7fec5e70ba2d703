/**
 * An IPv6 literal's eight 16-bit groups, `::` filled and a dotted IPv4 tail (`::ffff:1.2.3.4`,
 * `64:ff9b::1.2.3.4`) taken as the last two; null for anything that is not one. The one expander
 * address classes, CIDR sets and the SOCKS5 wire share (#47: there were three). Brackets and a
 * zone (`[fe80::1%eth0]`) are the caller's to strip (`bareAddress`).
 */
export function ipv6Groups(ip: string): number[] | null {
  let s = ip.toLowerCase();
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (dotted) {
    const o = dotted.slice(1).map(Number);
    if (o.some((x) => x > 255)) return null;
    s = `${s.slice(0, dotted.index)}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const [head, tail] = halves as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail !== undefined ? 8 - h.length - t.length : 0;
  if (fill < 0 || (tail !== undefined && fill === 0)) return null;
  const groups = [...h, ...Array<string>(fill).fill('0'), ...t];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

/** An address as written in a URL or a socket's report, without brackets or a zone: `[fe80::1%eth0]` → `fe80::1`. */
export function bareAddress(ip: string): string {
  return ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
}
