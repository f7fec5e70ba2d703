import { describe, expect, it, vi } from 'vitest';
import { ErrorCodes, GatehopError, settleFirst } from '../../core/common/index.js';

const timeoutError = (): Error => new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, 'nothing in time');

describe('settleFirst: the first of the answer, the abort and the deadline (#47)', () => {
  it("resolves with the work's answer, tears down once with resolved=true, and leaves no timer or listener", async () => {
    const ac = new AbortController();
    const teardown = vi.fn();
    const add = vi.spyOn(ac.signal, 'addEventListener');
    const remove = vi.spyOn(ac.signal, 'removeEventListener');
    const p = settleFirst<number>({ signal: ac.signal, what: 'x', deadline: { ms: 50, error: timeoutError } }, (s) => {
      setImmediate(() => {
        s.resolve(7);
        s.reject(new Error('late'));
        s.resolve(8);
      });
      return teardown;
    });
    await expect(p).resolves.toBe(7);
    expect(teardown).toHaveBeenCalledTimes(1);
    expect(teardown).toHaveBeenCalledWith(true);
    expect(remove.mock.calls[0]![1]).toBe(add.mock.calls[0]![1]);
    ac.abort();
    await new Promise((r) => setTimeout(r, 70)); // past the deadline: nothing more happens
    expect(teardown).toHaveBeenCalledTimes(1);
  });

  it("times out with the caller's error and tears down with resolved=false", async () => {
    const teardown = vi.fn();
    await expect(
      settleFirst({ what: 'x', deadline: { ms: 5, error: timeoutError } }, () => teardown),
    ).rejects.toMatchObject({ code: ErrorCodes.EGRESS_CONNECT_TIMEOUT, message: 'nothing in time' });
    expect(teardown).toHaveBeenCalledWith(false);
  });

  it('an abort rejects with the coded abort reason naming what was waited for', async () => {
    const ac = new AbortController();
    const teardown = vi.fn();
    const p = settleFirst({ signal: ac.signal, what: 'probe 10.0.0.1:443' }, () => teardown);
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: ErrorCodes.ABORTED, message: 'probe 10.0.0.1:443: aborted' });
    expect(teardown).toHaveBeenCalledWith(false);
  });

  it('already aborted: rejected without starting the work', async () => {
    const start = vi.fn();
    await expect(settleFirst({ signal: AbortSignal.abort(), what: 'x' }, start)).rejects.toMatchObject({
      code: ErrorCodes.ABORTED,
    });
    expect(start).not.toHaveBeenCalled();
  });

  it('a work that settles or throws while starting still has its teardown run, once', async () => {
    const teardown = vi.fn();
    await expect(
      settleFirst<number>({ what: 'x' }, (s) => {
        s.resolve(1);
        return teardown;
      }),
    ).resolves.toBe(1);
    expect(teardown).toHaveBeenCalledTimes(1);
    await expect(
      settleFirst({ what: 'x' }, () => {
        throw new RangeError('bad start');
      }),
    ).rejects.toThrow(RangeError);
  });
});
