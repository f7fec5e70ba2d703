import { Stack, type StackOptions } from '../../core/netstack/index.js';

export interface LinkedStacks {
  a: Stack;
  b: Stack;
  /** Packets in flight are dropped while true (a cable pulled). */
  cut: boolean;
  /** Turns in which A was handed packets, and the batches they came in (with batchesToA). */
  readonly toA: { turns: number; batches: number };
  close(): void;
}

/**
 * Two stacks wired back to back (10.9.0.1 ↔ 10.9.0.2). Packets are delivered asynchronously, in
 * batches on setImmediate, as a real link would: never from inside the sender's call. With
 * batchesToA, A takes each turn's packets as one batch (inputBatch), as a tunnel hands them over;
 * a number cuts them into batches of at most that many, all in the turn (a TLS carrier's records).
 */
export function linkStacks(
  opts: {
    checksums?: boolean;
    mtu?: number;
    maxConnections?: number;
    impair?: (p: Buffer) => boolean;
    acksA?: StackOptions['acks'];
    batchesToA?: boolean | number;
    /** B is a capture gateway stack (every address is B's). */
    gatewayB?: boolean;
  } = {},
): LinkedStacks {
  const queues: { toA: Buffer[]; toB: Buffer[] } = { toA: [], toB: [] };
  let scheduled = false;
  const state = { cut: false };
  const toAStats = { turns: 0, batches: 0 };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const toA = queues.toA.splice(0);
      const toB = queues.toB.splice(0);
      for (const p of toB) if (!b.closed) b.input(p);
      if (toA.length > 0) toAStats.turns++;
      if (opts.batchesToA) {
        const size = opts.batchesToA === true ? toA.length : opts.batchesToA;
        for (let at = 0; at < toA.length && !a.closed; at += size) {
          toAStats.batches++;
          a.inputBatch(toA.slice(at, at + size));
        }
      } else for (const p of toA) if (!a.closed) a.input(p);
    });
  };
  const send =
    (q: Buffer[]) =>
    (p: Buffer): void => {
      if (state.cut || (opts.impair && !opts.impair(p))) return;
      q.push(p);
      schedule();
    };
  const common = {
    netmask: 24,
    gateway: '10.9.0.254',
    mtu: opts.mtu ?? 1500,
    checksums: opts.checksums ?? false,
    maxConnections: opts.maxConnections,
  };
  const a: Stack = new Stack({
    ...common,
    address: '10.9.0.1',
    ...(opts.acksA ? { acks: opts.acksA } : {}),
    output: send(queues.toB),
  });
  const b: Stack = new Stack({
    ...common,
    address: '10.9.0.2',
    ...(opts.gatewayB ? { captureGateway: true } : {}),
    output: send(queues.toA),
  });
  return {
    a,
    b,
    toA: toAStats,
    get cut() {
      return state.cut;
    },
    set cut(v: boolean) {
      state.cut = v;
    },
    close() {
      a.close();
      b.close();
    },
  };
}
