import { Stack, type StackOptions } from '../../core/netstack/index.js';

export interface LinkedStacks {
  a: Stack;
  b: Stack;
  /** Packets in flight are dropped while true (a cable pulled). */
  cut: boolean;
  close(): void;
}

/**
 * Two stacks wired back to back (10.9.0.1 ↔ 10.9.0.2). Packets are delivered asynchronously, in
 * batches on setImmediate, as a real link would: never from inside the sender's call. With
 * batchesToA, A takes each turn's packets as one batch (inputBatch), as a tunnel hands them over.
 */
export function linkStacks(
  opts: {
    checksums?: boolean;
    mtu?: number;
    maxConnections?: number;
    impair?: (p: Buffer) => boolean;
    acksA?: StackOptions['acks'];
    batchesToA?: boolean;
  } = {},
): LinkedStacks {
  const queues: { toA: Buffer[]; toB: Buffer[] } = { toA: [], toB: [] };
  let scheduled = false;
  const state = { cut: false };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const toA = queues.toA.splice(0);
      const toB = queues.toB.splice(0);
      for (const p of toB) if (!b.closed) b.input(p);
      if (opts.batchesToA) {
        if (!a.closed && toA.length > 0) a.inputBatch(toA);
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
  const b: Stack = new Stack({ ...common, address: '10.9.0.2', output: send(queues.toA) });
  return {
    a,
    b,
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
