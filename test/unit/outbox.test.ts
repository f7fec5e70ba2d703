import { describe, expect, it } from 'vitest';
import { Outbox, ownedBuffer } from '../../core/egress/worker/outbox.js';

type Msg = { t: 'data'; id: number; data: ArrayBuffer } | { t: 'fin'; id: number };

function recorder() {
  const posts: Array<{ batch: Msg[]; transfer: readonly ArrayBuffer[] }> = [];
  return {
    posts,
    target: {
      postMessage: (batch: unknown, transfer: readonly ArrayBuffer[] = []) =>
        void posts.push({ batch: batch as Msg[], transfer }),
    },
  };
}
const text = (ab: ArrayBuffer): string => Buffer.from(ab).toString();

describe('Outbox (messages across the tunnel thread boundary)', () => {
  it("posts everything sent in one turn as one batch, merging a stream's consecutive chunks into one transferred buffer", async () => {
    const { posts, target } = recorder();
    const out = new Outbox<Msg>(target, (id, data) => ({ t: 'data', id, data }), { giveAway: false });
    out.sendData(1, Buffer.from('hel'));
    out.sendData(1, Buffer.from('lo'));
    out.sendData(2, Buffer.from('x'));
    out.send({ t: 'fin', id: 1 });
    expect(posts).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(posts).toHaveLength(1);
    const [b] = posts;
    expect(b!.batch.map((m) => m.t)).toEqual(['data', 'data', 'fin']);
    expect(text((b!.batch[0] as { data: ArrayBuffer }).data)).toBe('hello');
    expect(b!.transfer).toHaveLength(2);
  });

  it('never merges data past a message queued after it (order is kept)', () => {
    const { posts, target } = recorder();
    const out = new Outbox<Msg>(target, (id, data) => ({ t: 'data', id, data }), { giveAway: false });
    out.sendData(1, Buffer.from('a'));
    out.send({ t: 'fin', id: 1 });
    out.sendData(1, Buffer.from('b'));
    out.flush();
    expect(posts[0]!.batch.map((m) => (m.t === 'data' ? text(m.data) : 'FIN'))).toEqual(['a', 'FIN', 'b']);
  });

  it("copies a caller's buffer unless told it may give it away, and never gives away a pooled slice", () => {
    const own = Buffer.from(new ArrayBuffer(8192));
    expect(ownedBuffer([own], own.length, false)).not.toBe(own.buffer);
    expect(ownedBuffer([own], own.length, true)).toBe(own.buffer);
    const pooled = Buffer.allocUnsafe(100); // a slice of Node's shared pool
    const copy = ownedBuffer([pooled], pooled.length, true);
    expect(copy).not.toBe(pooled.buffer);
    expect(copy.byteLength).toBe(100);
  });

  it('posts nothing after close', async () => {
    const { posts, target } = recorder();
    const out = new Outbox<Msg>(target, (id, data) => ({ t: 'data', id, data }), { giveAway: false });
    out.send({ t: 'fin', id: 1 });
    out.close();
    out.send({ t: 'fin', id: 2 });
    out.flush();
    await new Promise((r) => setTimeout(r, 5));
    expect(posts).toHaveLength(0);
  });
});
