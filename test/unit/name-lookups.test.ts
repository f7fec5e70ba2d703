import { describe, expect, it } from 'vitest';
import { NameLookups } from '../../core/router/index.js';

/** A resolver whose answers the test releases by hand, counting what was asked. */
function resolver() {
  const asked: string[] = [];
  const pending: Array<{ host: string; answer: (a: string[]) => void; fail: (e: Error) => void }> = [];
  return {
    asked,
    resolve: (host: string) =>
      new Promise<string[]>((answer, fail) => {
        asked.push(host);
        pending.push({ host, answer, fail });
      }),
    answer: (addresses: string[]) => pending.shift()!.answer(addresses),
    fail: () => pending.shift()!.fail(new Error('SERVFAIL')),
  };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('UDP target names: one lookup a name, bounded (#45: the DIRECT leg resolved once per datagram)', () => {
  it('a burst of datagrams to one name is one lookup; each is sent once it answers, later ones from the cache', async () => {
    const r = resolver();
    const sent: string[] = [];
    const drops: string[] = [];
    const names = new NameLookups({ resolve: r.resolve, onDrop: (_h, why) => drops.push(why) });
    for (let i = 0; i < 10; i++) names.with('stun.example', (ip) => sent.push(`${i}@${ip}`));
    expect(r.asked).toEqual(['stun.example']);
    r.answer(['192.0.2.1']);
    await tick();
    expect(sent).toHaveLength(10);
    names.with('stun.example', (ip) => sent.push(`later@${ip}`));
    expect(sent.at(-1)).toBe('later@192.0.2.1');
    expect(r.asked).toHaveLength(1);
    expect(drops).toEqual([]);
  });

  it('bounds what waits: per name, and names at once; a failed or empty answer drops what waited on it', async () => {
    const r = resolver();
    const drops: string[] = [];
    const names = new NameLookups({
      resolve: r.resolve,
      maxWaiting: 3,
      maxLookups: 2,
      onDrop: (h, why) => drops.push(`${h}:${why}`),
    });
    for (let i = 0; i < 5; i++) names.with('a.example', () => undefined);
    names.with('b.example', () => undefined);
    names.with('c.example', () => undefined); // a third name while two are looked up
    expect(r.asked).toEqual(['a.example', 'b.example']);
    expect(drops).toEqual(['a.example:full', 'a.example:full', 'c.example:full']);
    r.fail();
    r.answer([]);
    await tick();
    expect(drops.slice(3)).toEqual(['a.example:failed', 'a.example:failed', 'a.example:failed', 'b.example:no-answer']);
    expect(names.pending).toBe(0);
  });
});
