/**
 * npm run bench:honesty [-- --rounds 10] [-- --short]   (`--short`, bench:check's version: 3 rounds)
 *
 * What one honesty check of a node costs (#43), measured through real tunnels on the rig: its
 * duration and the bytes it moves through the tunnel, for an honest node and for each kind of
 * dishonest one (a lying resolver, an injecting proxy, a TLS interceptor); beside it, what
 * opening a tunnel for a background check costs (the sweep's other part). From those, how long a
 * 100-node pool takes to be checked at the default pace; and how often each node's round came
 * out flagged (#59: the false-flag rate on the honest node, whose goal is 0; the dishonest ones,
 * whose goal is every round). Root only (the rig).
 */
import { parseArgs } from 'node:util';
import { buildConfig } from '../core/app/index.js';
import { silentLogger } from '../core/common/index.js';
import { TunnelEgress } from '../core/egress/index.js';
import { checkNodeHonesty, honestyOptions } from '../core/honesty/index.js';
import { installPublicRoot } from '../test/helpers/pki.js';
import { rigHonesty } from '../test/helpers/rig-app.js';
import { sevpnLinkOf } from '../test/helpers/rig-links.js';
import { Rig } from '../test/rig/rig.js';
import { FigureSheet } from './lib/figures.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '10' }, short: { type: 'boolean', default: false } },
});
const rounds = values.short ? 3 : Number(values.rounds);
const sheet = new FigureSheet('honesty');

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

const rig = await Rig.up({ nodes: 4, openvpn: [], dishonest: { n2: 'dns', n3: 'http', n4: 'tls' } });
const restore = installPublicRoot({ certFile: rig.state.publicRootFile });
try {
  const c = buildConfig(rigHonesty(rig), {});
  const rows: Array<{ node: string; verdict: string; ms: number; bytes: number; openMs: number; flagged: number }> = [];
  for (const nodeName of ['rig-node1', 'rig-node2', 'rig-node3', 'rig-node4']) {
    const open: number[] = [];
    const ms: number[] = [];
    const bytes: number[] = [];
    let verdict = '';
    let flagged = 0;
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      const t = await TunnelEgress.open({
        id: `bench-${nodeName}-${i}`,
        nodeId: nodeName,
        link: sevpnLinkOf(rig, nodeName),
        logger: silentLogger(),
        connectTimeoutMs: 20_000,
      });
      open.push(performance.now() - t0);
      try {
        const r = await checkNodeHonesty(t, t.dnsServers, c.honesty, { direct: null, doh: c.dohServers });
        ms.push(r.durationMs);
        bytes.push(r.bytes);
        verdict = r.verdict;
        if (r.verdict !== 'honest' && r.verdict !== 'unchecked') flagged++;
      } finally {
        await t.close();
      }
    }
    rows.push({ node: nodeName, verdict, ms: median(ms), bytes: median(bytes), openMs: median(open), flagged });
  }
  console.log(`\nOne honesty check through an SE-VPN tunnel on the rig (medians of ${rounds})\n`);
  console.log('| node | verdict | flagged rounds | check (ms) | bytes through the tunnel | opening its tunnel (ms) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.node} | ${r.verdict} | ${r.flagged}/${rounds} | ${Math.round(r.ms)} | ${r.bytes} | ${Math.round(r.openMs)} |`,
    );
  for (const r of rows) {
    sheet.set(`${r.verdict} check`, r.ms, 'ms', 'lower');
    sheet.set(`${r.verdict} bytes`, r.bytes, 'B', 'lower');
    sheet.set(`${r.verdict} tunnel open`, r.openMs, 'ms', 'lower');
  }
  // The honest node's rounds that came out flagged: a false flag (the goal is 0).
  sheet.set('honest node false flags', rows[0]!.flagged / rounds, 'ratio', 'lower');
  sheet.save();
  const pace = honestyOptions().sweepEveryMs;
  const honest = rows[0]!;
  console.log(
    `\nDefault pace: one background check every ${pace / 1000} s while the proxy is in use ` +
      `(a check ~${Math.round(honest.ms)} ms + a tunnel ~${Math.round(honest.openMs)} ms each): ` +
      `a 100-node pool in ~${Math.round((100 * pace) / 60_000)} min of use; a node in use is checked at a random ` +
      `moment within ${honestyOptions().inUseWithinMs / 60_000} min of its first use.`,
  );
  console.log(
    `Budget per check (config): ${honestyOptions().timeoutMs / 1000} s and ${honestyOptions().maxBytes / 1024} KiB.`,
  );
} finally {
  restore();
  rig.down();
}
