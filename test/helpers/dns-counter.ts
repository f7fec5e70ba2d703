import { execFileSync } from 'node:child_process';

/** A name in DNS wire form: its labels, each after its length, and the root's zero. */
function wireName(name: string): Buffer {
  return Buffer.concat([
    ...name.split('.').map((l) => Buffer.concat([Buffer.of(l.length), Buffer.from(l)])),
    Buffer.of(0),
  ]);
}

/** A DNS query for `name` (type A) as a datagram: what a probe of a name-matching counter sends. */
export function dnsQueryPacket(name: string): Buffer {
  const header = Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([header, wireName(name), Buffer.from([0, 1, 0, 1])]);
}

/**
 * A counter on this host's own output for port 53 (UDP and TCP) from sockets of user `uid`, in an
 * nftables table of the test's own (`name` and this process's pid): how a test tells that no DNS
 * query left in clear. Per user, so tests running side by side (each with its own user, or root)
 * do not count each other's probes. With `qname`, only UDP queries for that name, in lower case, are counted (the
 * name right after the 12-byte header; queries over TCP, rare, are all counted): tests running
 * side by side as root look other names up through this host's resolver (CI saw 5 such packets
 * during one test), and what a test asks is whether its own name left in clear.
 */
export function dnsCounter(
  name: string,
  uid: number,
  opts: { qname?: string } = {},
): { packets: () => number; remove: () => void } {
  const table = `${name}_${process.pid}`;
  const nft = (args: string[], input?: string): string => execFileSync('nft', args, { input, encoding: 'utf8' });
  let udpMatch = '';
  if (opts.qname) {
    const wire = wireName(opts.qname.toLowerCase());
    // nftables compares at most 128 bits of raw payload in one expression.
    if (wire.length > 16) throw new Error(`dnsCounter: ${opts.qname} is too long to match (at most 14 characters)`);
    // @th counts from the UDP header: 8 bytes of it, then the DNS header's 12.
    udpMatch = ` @th,160,${wire.length * 8} 0x${wire.toString('hex')}`;
  }
  nft(
    ['-f', '-'],
    `table inet ${table} {\n chain out {\n type filter hook output priority 0; policy accept;\n meta skuid ${uid} udp dport 53${udpMatch} counter\n meta skuid ${uid} tcp dport 53 counter\n }\n}\n`,
  );
  return {
    packets: () =>
      [...nft(['list', 'table', 'inet', table]).matchAll(/counter packets (\d+)/g)].reduce(
        (n, m) => n + Number(m[1]),
        0,
      ),
    remove: () => void nft(['delete', 'table', 'inet', table]),
  };
}
