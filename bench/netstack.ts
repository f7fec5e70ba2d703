/**
 * core/netstack benchmark, printed side by side in one run:
 *   1. two stacks back to back in one process (checksums off, then on)
 *   2. our stack ↔ the Linux kernel through a TUN device (tun_bridge.py relays; root only)
 *   3. kernel ↔ kernel over a veth pair between two namespaces: the ceiling (root only)
 *   4. memory per idle and per busy connection (two stacks, WASM memory and RSS)
 * Usage: npm run bench:netstack [-- --mib N] [-- --short]
 * `--short` (bench:check's version): 128 MiB. Figures are saved with bench/lib/figures.ts.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { Stack, type TcpStream } from '../core/netstack/index.js';
import { KernelPeer, KERNEL_IP } from '../test/helpers/kernel-peer.js';
import { isRoot, NetNs, waitForLine } from '../test/helpers/netns.js';
import { linkStacks } from '../test/helpers/stack-link.js';
import { FigureSheet, isShort } from './lib/figures.js';

const argMib = process.argv.indexOf('--mib');
const MIB = argMib > 0 ? Number(process.argv[argMib + 1]) : isShort() ? 128 : 512;
const sheet = new FigureSheet('netstack');
const BYTES = MIB << 20;

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

async function pumpAndDrain(writer: TcpStream, reader: TcpStream, bytes: number): Promise<void> {
  let got = 0;
  reader.on('data', (c: Buffer) => (got += c.length));
  const done = once(reader, 'end');
  const chunk = Buffer.alloc(64 * 1024, 0xab);
  for (let sent = 0; sent < bytes; sent += chunk.length) if (!writer.write(chunk)) await once(writer, 'drain');
  writer.end();
  await done;
  reader.end();
  writer.resume();
  if (got !== bytes) throw new Error(`short: ${got}`);
}

async function twoStacks(checksums: boolean): Promise<{ mibs: number; cpuPerGiB: number }> {
  const link = linkStacks({ checksums });
  const server = new Promise<TcpStream>((r) => link.b.listenTcp(5000, r));
  const c = await link.a.connectTcp('10.9.0.2', 5000);
  const s = await server;
  c.on('error', () => {});
  s.on('error', () => {});
  const t0 = performance.now();
  const cpu0 = cpuSeconds();
  await pumpAndDrain(c, s, BYTES);
  const secs = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds() - cpu0;
  link.close();
  return { mibs: MIB / secs, cpuPerGiB: (cpu / MIB) * 1024 };
}

async function stackToKernel(): Promise<{ mibs: number; cpuPerGiB: number }> {
  const peer = await KernelPeer.start();
  try {
    await peer.startServers();
    const bytes = Math.min(BYTES, 256 << 20);
    const s = await peer.stack.connectTcp(KERNEL_IP, 5005);
    s.on('error', () => {});
    let got = 0;
    s.on('data', (c: Buffer) => (got += c.length));
    const done = once(s, 'end');
    const t0 = performance.now();
    const cpu0 = cpuSeconds();
    s.end(`${bytes}\n`);
    await done;
    const secs = (performance.now() - t0) / 1000;
    if (got !== bytes) throw new Error(`short: ${got}`);
    return { mibs: bytes / (1 << 20) / secs, cpuPerGiB: (cpuSeconds() - cpu0) / (bytes / (1 << 30)) };
  } finally {
    peer.close();
  }
}

async function kernelToKernel(): Promise<number> {
  const a = new NetNs();
  const b = new NetNs();
  try {
    const va = `gv${process.pid % 10000}a`;
    const vb = `gv${process.pid % 10000}b`;
    execFileSync('ip', ['link', 'add', va, 'type', 'veth', 'peer', 'name', vb]);
    execFileSync('ip', ['link', 'set', va, 'netns', a.name]);
    execFileSync('ip', ['link', 'set', vb, 'netns', b.name]);
    a.exec(['ip', 'addr', 'add', '10.78.0.1/24', 'dev', va]);
    b.exec(['ip', 'addr', 'add', '10.78.0.2/24', 'dev', vb]);
    a.exec(['ip', 'link', 'set', va, 'up']);
    b.exec(['ip', 'link', 'set', vb, 'up']);
    const server = a.spawn([
      process.execPath,
      resolve(import.meta.dirname, '../test/netstack/kernel/ns-servers.mjs'),
      '10.78.0.1',
    ]);
    await waitForLine(server, /^ready$/);
    // The same source server, read by curl-free raw TCP from the other namespace.
    const bytes = Math.min(BYTES, 1 << 30);
    const script = `const s=require('net').connect(5005,'10.78.0.1');let n=0;const t=process.hrtime.bigint();s.on('data',c=>n+=c.length);s.on('end',()=>{console.log(n, Number(process.hrtime.bigint()-t)/1e9)});s.end('${bytes}\\n')`;
    const out = b.exec([process.execPath, '-e', script]).trim().split(' ');
    return bytes / (1 << 20) / Number(out[1]);
  } finally {
    a.close();
    b.close();
  }
}

async function memoryPerConnection(): Promise<{ idleBytes: number; busyBytes: number; idleRss: number }> {
  const link = linkStacks();
  const accepted: TcpStream[] = [];
  link.b.listenTcp(7, (s) => {
    s.on('error', () => {});
    accepted.push(s);
  });
  const heap = (): number => link.a.stats.heapBytes + link.b.stats.heapBytes;
  const wasm0 = heap();
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const N = 1000;
  const conns = await Promise.all(
    Array.from({ length: N }, () => link.a.connectTcp('10.9.0.2', 7, { timeoutMs: 30_000 })),
  );
  for (const c of conns) c.on('error', () => {});
  const wasm1 = heap();
  const rss1 = process.memoryUsage().rss;
  // Busy: 100 connections whose readers are paused with a full window in flight.
  const busy = conns.slice(0, 100);
  for (const s of accepted.slice(0, 100)) s.pause();
  for (const c of busy) c.write(Buffer.alloc(1 << 20));
  await new Promise((r) => setTimeout(r, 2000));
  const wasm2 = heap();
  link.close();
  return {
    idleBytes: Math.max(0, wasm1 - wasm0) / N,
    busyBytes: Math.max(0, wasm2 - wasm1) / 100,
    idleRss: (rss1 - rss0) / N,
  };
}

const fmt = (n: number): string => n.toFixed(0).padStart(6);
const s0 = await twoStacks(false);
const s1 = await twoStacks(true);
console.log(`netstack benchmark (${MIB} MiB per transfer, one TCP connection, MTU 1500)`);
console.log(`  two stacks, checksums off   ${fmt(s0.mibs)} MiB/s   CPU ${s0.cpuPerGiB.toFixed(2)} s/GiB`);
console.log(`  two stacks, checksums on    ${fmt(s1.mibs)} MiB/s   CPU ${s1.cpuPerGiB.toFixed(2)} s/GiB`);
sheet.set('two stacks, checksums off', s0.mibs, 'MiB/s', 'higher');
sheet.set('two stacks, checksums off CPU', s0.cpuPerGiB, 's/GiB', 'lower');
sheet.set('two stacks, checksums on', s1.mibs, 'MiB/s', 'higher');
sheet.set('two stacks, checksums on CPU', s1.cpuPerGiB, 's/GiB', 'lower');
if (isRoot) {
  const k = await stackToKernel();
  const veth = await kernelToKernel();
  console.log(
    `  stack ← kernel over TUN     ${fmt(k.mibs)} MiB/s   CPU ${k.cpuPerGiB.toFixed(2)} s/GiB (this process)   ${(k.mibs / veth).toFixed(2)}x veth`,
  );
  console.log(`  kernel ← kernel over veth   ${fmt(veth)} MiB/s   (ceiling)`);
  console.log(`  two stacks vs veth          ${(s1.mibs / veth).toFixed(2)}x (checksums on)`);
  sheet.set('stack ← kernel over TUN', k.mibs, 'MiB/s', 'higher');
  sheet.set('stack ← kernel over TUN CPU', k.cpuPerGiB, 's/GiB', 'lower');
  sheet.set('kernel ← kernel over veth', veth, 'MiB/s', 'higher');
  sheet.set('stack ← kernel / veth', k.mibs / veth, '×', 'higher');
} else {
  console.log('  (stack↔kernel and veth need root)');
}
const m = await memoryPerConnection();
console.log(
  `memory: idle connection ${(m.idleBytes / 1024).toFixed(1)} KiB lwIP heap + ${(m.idleRss / 1024).toFixed(1)} KiB RSS (both ends); busy connection (full window in flight) ${(m.busyBytes / 1024).toFixed(0)} KiB lwIP heap`,
);
sheet.set('idle connection lwIP heap', m.idleBytes / 1024, 'KiB', 'lower');
sheet.set('idle connection RSS', m.idleRss / 1024, 'KiB', 'lower');
sheet.set('busy connection lwIP heap', m.busyBytes / 1024, 'KiB', 'lower');
sheet.save();
