import { beforeEach, describe, expect, it, vi } from 'vitest';
import { routeFor, settingsUpdateSchema } from '../../core/api/contract.js';
import type { CoreEvent, Connection } from '../src/client/core-client.js';
import { HttpCoreClient } from '../src/client/http-core-client.js';
import { IpcCoreClient, type GatehopBridge } from '../src/client/ipc-core-client.js';
import { FakeEventSource, status } from './fakes.js';

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

describe('HttpCoreClient', () => {
  beforeEach(() => {
    FakeEventSource.all = [];
  });

  function client(fetchImpl: typeof fetch) {
    const timers: Array<{ fn: () => void; ms: number }> = [];
    const c = new HttpCoreClient({
      baseUrl: 'http://127.0.0.1:9090',
      token: 'tok',
      fetch: fetchImpl,
      EventSource: FakeEventSource as unknown as typeof EventSource,
      backoff: { initialMs: 1000, maxMs: 4000 },
      setTimeout: (fn, ms) => timers.push({ fn, ms }),
      clearTimeout: () => {},
    });
    return { c, timers };
  }

  it('sends the token, fills path parameters, and validates the answer against the contract', async () => {
    const calls: Array<[string, RequestInit]> = [];
    const { c } = client((async (url: string, init: RequestInit) => {
      calls.push([url, init]);
      return url.endsWith('/status') ? jsonResponse(200, status()) : new Response(null, { status: 204 });
    }) as typeof fetch);
    const st = await c.call('getStatus', {});
    expect(st).toMatchObject({ ok: true, value: { mode: 'auto' } });
    expect((calls[0]![1].headers as Record<string, string>).authorization).toBe('Bearer tok');
    await c.call('closeDraining', { egressId: 'tunnel 1/x' });
    expect(calls[1]).toMatchObject(['http://127.0.0.1:9090/draining/tunnel%201%2Fx', { method: 'DELETE' }]);
    c.close();
  });

  it("keeps the core's stable error code, and turns a malformed answer or a dead core into coded errors", async () => {
    let mode = 'refused';
    const { c } = client((async () => {
      if (mode === 'refused')
        return jsonResponse(409, { error: 'GH_ERR_SWITCH_IN_PROGRESS', message: 'switch 3 is in progress' });
      if (mode === 'bad') return jsonResponse(200, { nope: true });
      throw new TypeError('fetch failed');
    }) as typeof fetch);
    expect(await c.call('switchNode', { nodeId: 'x' })).toEqual({
      ok: false,
      error: { code: 'GH_ERR_SWITCH_IN_PROGRESS', message: 'switch 3 is in progress' },
    });
    mode = 'bad';
    expect(await c.call('getStatus', {})).toMatchObject({ ok: false, error: { code: 'GH_ERR_UI_BAD_RESPONSE' } });
    mode = 'down';
    expect(await c.call('getStatus', {})).toMatchObject({ ok: false, error: { code: 'GH_ERR_UI_UNREACHABLE' } });
    expect(await c.call('putSettings', { listen: 'nope' })).toMatchObject({
      ok: false,
      error: { code: 'GH_ERR_UI_INVALID_INPUT' },
    });
    c.close();
  });

  it('delivers contract-valid events, drops invalid ones, and reconnects with back-off, resyncing after each reconnect', () => {
    const { c, timers } = client((async () => jsonResponse(200, {})) as typeof fetch);
    const events: CoreEvent[] = [];
    const conns: Connection['state'][] = [];
    let resyncs = 0;
    c.subscribe((e) => events.push(e));
    c.onConnection((x) => conns.push(x.state));
    c.onResync(() => resyncs++);
    const first = FakeEventSource.all[0]!;
    expect(first.url).toBe('http://127.0.0.1:9090/events?token=tok');
    first.open();
    first.send('status', status());
    first.send('status', { broken: true });
    expect(events.map((e) => e.type)).toEqual(['status']);
    expect(resyncs).toBe(0); // the first open is not a re-connect
    first.fail();
    first.fail(); // a second error from the same, closed stream changes nothing
    expect(first.closed).toBe(true);
    expect(timers.map((t) => t.ms)).toEqual([1000]);
    timers[0]!.fn();
    FakeEventSource.all[1]!.fail();
    timers[1]!.fn();
    FakeEventSource.all[2]!.fail();
    timers[2]!.fn();
    FakeEventSource.all[3]!.fail();
    expect(timers.map((t) => t.ms)).toEqual([1000, 2000, 4000, 4000]);
    timers[3]!.fn();
    FakeEventSource.all[4]!.open();
    expect(resyncs).toBe(1);
    expect(conns).toEqual(['open', 'down', 'down', 'down', 'down', 'open']);
    c.close();
  });
});

describe('IpcCoreClient', () => {
  it('calls the bridge function of each operation and validates both ways', async () => {
    let emit: (event: string, data: unknown) => void = () => {};
    const bridge = {
      getStatus: vi.fn(async () => ({ ok: true, value: status() })),
      setMode: vi.fn(async () => ({ ok: true, value: { wrong: 1 } })),
      subscribe: (fn: (event: string, data: unknown) => void) => {
        emit = fn;
        return () => {};
      },
    } as unknown as GatehopBridge;
    const c = new IpcCoreClient(bridge);
    expect(await c.call('getStatus', {})).toMatchObject({ ok: true });
    expect(await c.call('setMode', { auto: true })).toMatchObject({
      ok: false,
      error: { code: 'GH_ERR_UI_BAD_RESPONSE' },
    });
    expect(await c.call('setMode', { auto: 'yes' } as never)).toMatchObject({
      ok: false,
      error: { code: 'GH_ERR_UI_INVALID_INPUT' },
    });
    const seen: string[] = [];
    c.subscribe((e) => seen.push(e.type));
    emit('latency', { samples: [{ nodeId: 'n1', at: 1, kind: 'url', ms: 20, success: true }] });
    emit('latency', { samples: [{ nodeId: 'n1' }] });
    emit('no-such-event', {});
    expect(seen).toEqual(['latency']);
    c.close();
  });
});

describe('the contract', () => {
  it('routes path parameters and rejects settings the core would refuse', () => {
    expect(routeFor('closeConnection', { id: '42' })).toEqual({ method: 'DELETE', path: '/connections/42', rest: {} });
    expect(routeFor('getLatency', { nodeId: 'a', sinceMs: 5 })).toEqual({
      method: 'GET',
      path: '/latency',
      rest: { nodeId: 'a', sinceMs: 5 },
    });
    expect(settingsUpdateSchema.safeParse({ listen: '127.0.0.1:1080' }).success).toBe(true);
    expect(settingsUpdateSchema.safeParse({ listen: 'localhost' }).success).toBe(false);
    expect(settingsUpdateSchema.safeParse({ countryAllow: ['jp'] }).success).toBe(false);
    expect(settingsUpdateSchema.safeParse({ bogus: 1 }).success).toBe(false);
  });
});
