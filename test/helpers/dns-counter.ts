import { execFileSync } from 'node:child_process';

/**
 * A counter on this host's own output for port 53 (UDP and TCP) from sockets of user `uid`, in an
 * nftables table of the test's own (`name` and this process's pid): how a test tells that no DNS
 * query left in clear. Per user, so tests running side by side (each with its own user, or root)
 * do not count each other's probes.
 */
export function dnsCounter(name: string, uid: number): { packets: () => number; remove: () => void } {
  const table = `${name}_${process.pid}`;
  const nft = (args: string[], input?: string): string => execFileSync('nft', args, { input, encoding: 'utf8' });
  nft(
    ['-f', '-'],
    `table inet ${table} {\n chain out {\n type filter hook output priority 0; policy accept;\n meta skuid ${uid} udp dport 53 counter\n meta skuid ${uid} tcp dport 53 counter\n }\n}\n`,
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
