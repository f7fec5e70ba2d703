/**
 * Where a tunnel's CPU goes: one download through one rig server on the main thread, with
 *   - each thread's CPU (/proc/self/task: the main thread, V8's GC helpers, libuv's pool), user and
 *     system apart, per GiB;
 *   - a V8 CPU profile of the main thread (sampled every 200 µs), summed into the data path's
 *     stages: time inside a native call is charged to the JavaScript function that made it.
 * The profile is written to /tmp for Chrome DevTools. Root only.
 * Usage: npm run bench:tunnel-profile [-- --node n1|o1|o2|o3] [--proto udp|tcp|sevpn] [--mib N]
 * (sevpn: SoftEther's own protocol to a SoftEther node, one TCP connection.)
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { dataEngineStatus, silentLogger } from '../core/common/index.js';
import { openLink, stackOptionsOf, type LinkSpec } from '../core/egress/index.js';
import { Stack } from '../core/netstack/index.js';
import { Rig } from '../test/rig/rig.js';
import { sevpnLinkOf } from '../test/helpers/rig-links.js';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : dflt;
};
const NODE = arg('node', 'n1');
const PROTO = arg('proto', 'udp') as 'udp' | 'tcp' | 'sevpn';
const MIB = Number(arg('mib', '64'));

type ThreadTimes = Map<string, { name: string; user: number; system: number }>;
function threadTimes(): ThreadTimes {
  const m: ThreadTimes = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    m.set(tid, {
      name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      user: Number(f[11]) / 100,
      system: Number(f[12]) / 100,
    });
  }
  return m;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** Stages of the data path, by the first frame on the stack (innermost first) that names one. */
const STAGES: Array<[string, RegExp]> = [
  ['carrier send (sendmmsg / TCP write, kernel included)', /^(#sendSealed|sendOne|writeGeneric|writeBuffer)$/],
  ['open: authenticate + decrypt (native call)', /^open$/],
  ['seal: encrypt + HMAC (native call)', /^seal$/],
  ['lwIP in WebAssembly', /^wasm-function/],
  ['netstack glue (events, copies, streams)', /stack\.ts|tcp-stream\.ts/],
  ['tunnel client (batching, framing, records)', /tunnel-client\.ts|packet\.ts|data-channel\.ts|data-cipher/],
  ['SE-VPN session (blocks in and out, TLS writes)', /se-session\.ts|blocks\.ts|sevpn-link\.ts/],
  ["the reader (the download's consumer, Node streams)", /readable|stream|events/],
  ['garbage collector', /^\(garbage collector\)$/],
];

function stageOf(path: ProfileNode[]): string {
  for (const n of path) {
    const { functionName, url } = n.callFrame;
    for (const [stage, re] of STAGES) if (re.test(functionName) || re.test(url)) return stage;
  }
  return 'other (event loop, timers, Node internals)';
}

const rig = await Rig.up({ nodes: 1, openvpn: ['gcm-udp', 'cbc-udp', 'gcm-tcp'], bigMib: MIB });
try {
  const n = rig.node(NODE);
  const spec: LinkSpec =
    PROTO === 'sevpn'
      ? sevpnLinkOf(rig, NODE)
      : { protocol: 'openvpn', profileText: readFileSync(n.profiles[PROTO]!, 'utf8') };
  const { link, config } = await openLink(spec, { logger: silentLogger(), timeoutMs: 30_000 });
  const stack = new Stack({ ...stackOptionsOf(config), output: (p) => link.write(p) });
  link.onPackets((batch) => stack.inputBatch(batch));
  if (config.ethernet) await stack.whenLeased({ timeoutMs: 30_000 });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  const s = await stack.connectTcp(rig.state.inetAddress, 80);
  s.on('error', () => {});
  let got = 0;
  await session.post('Profiler.start');
  const t0 = performance.now();
  const before = threadTimes();
  s.on('data', (c: Buffer) => (got += c.length));
  s.write('GET /big HTTP/1.1\r\nHost: files.test\r\nConnection: close\r\n\r\n');
  await new Promise((r) => s.once('end', r));
  const after = threadTimes();
  const secs = (performance.now() - t0) / 1000;
  const { profile } = await session.post('Profiler.stop');
  stack.close();
  link.close();
  const file = `/tmp/gatehop-tunnel-${NODE}-${PROTO}.cpuprofile`;
  writeFileSync(file, JSON.stringify(profile));

  const perGiB = (1 << 30) / got;
  console.log(
    `${NODE}/${PROTO}, ${PROTO === 'sevpn' ? 'TLS (OpenSSL)' : dataEngineStatus().engine} data path: ${(got / secs / (1 << 20)).toFixed(1)} MiB/s; CPU s/GiB by thread (the profiler's own thread left out):`,
  );
  let user = 0;
  let system = 0;
  for (const [tid, a] of after) {
    const b = before.get(tid) ?? { user: 0, system: 0 };
    const du = a.user - b.user;
    const ds = a.system - b.system;
    if (du + ds === 0 || a.name.startsWith('v8:Prof')) continue;
    user += du;
    system += ds;
    console.log(
      `  ${(tid === String(process.pid) ? 'main thread' : a.name).padEnd(16)} user ${(du * perGiB).toFixed(1).padStart(5)}  system ${(ds * perGiB).toFixed(1).padStart(5)}`,
    );
  }
  console.log(
    `  ${'all'.padEnd(16)} user ${(user * perGiB).toFixed(1).padStart(5)}  system ${(system * perGiB).toFixed(1).padStart(5)}  = ${((user + system) * perGiB).toFixed(1)}`,
  );

  const nodes = new Map<number, ProfileNode>((profile.nodes as ProfileNode[]).map((x) => [x.id, x]));
  const parent = new Map<number, number>();
  for (const x of nodes.values()) for (const c of x.children ?? []) parent.set(c, x.id);
  const stages = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples ?? []) {
    if (nodes.get(id)!.callFrame.functionName === '(idle)') continue;
    busy++;
    const path: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) path.push(nodes.get(at)!);
    const stage = stageOf(path);
    stages.set(stage, (stages.get(stage) ?? 0) + 1);
  }
  const interval = (profile.endTime - profile.startTime) / 1e6 / (profile.samples?.length ?? 1);
  console.log(`main thread in JavaScript or a call it made: ${(busy * interval * perGiB).toFixed(1)} s/GiB; by stage:`);
  for (const [stage, count] of [...stages].sort((a, b) => b[1] - a[1]))
    console.log(`  ${((100 * count) / busy).toFixed(1).padStart(5)} %  ${stage}`);
  console.log(
    `(the rest of the main thread's time is libuv polling and reading, outside JavaScript; profile: ${file})`,
  );
} finally {
  rig.down();
}
