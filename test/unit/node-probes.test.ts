import { createServer as createHttp, type Server } from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ErrorCodes } from '../../core/common/index.js';
import {
  FailFilter,
  failFilterSchema,
  probeSpecSchema,
  ProbeLoop,
  runProbe,
  urlTest,
} from '../../core/selector/index.js';
import type { Dialer } from '../../core/reach/index.js';

/** Dials on this machine, as a tunnel's connectTcp would reach a host inside it. */
const dial: Dialer = {
  via: 'tunnel',
  dial: (host, port, signal) =>
    new Promise((resolve, reject) => {
      const s = connect({ host, port });
      s.once('connect', () => resolve(s));
      s.once('error', reject);
      signal.addEventListener('abort', () => s.destroy(new Error('aborted')), { once: true });
    }),
};

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((r) => {
          s.closeAllConnections?.();
          s.close(() => r());
        }),
    ),
  );
});

async function http(handler: Parameters<typeof createHttp>[1]): Promise<string> {
  const s = createHttp(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  servers.push(s);
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const spec = (s: unknown) => probeSpecSchema.parse(s);

describe('node probes', () => {
  it('tcp: a listening port passes, a closed one fails', async () => {
    const srv = createServer((c) => c.end());
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as AddressInfo).port;
    expect(await runProbe(spec({ type: 'tcp', addr: `127.0.0.1:${port}` }), dial)).toBeGreaterThanOrEqual(0);
    await new Promise<void>((r) => srv.close(() => r()));
    await expect(runProbe(spec({ type: 'tcp', addr: `127.0.0.1:${port}` }), dial)).rejects.toThrow();
  });

  it('http: checks the expected status (204 for generate_204, else 200), sends the Host and headers asked for', async () => {
    let seen: Record<string, unknown> = {};
    let status = 204;
    const base = await http((req, res) => {
      seen = { host: req.headers.host, x: req.headers['x-probe'] };
      res.writeHead(status);
      res.end();
    });
    expect(
      await runProbe(
        spec({ type: 'http', url: `${base}/generate_204`, host: 'probe.example', headers: { 'X-Probe': 'yes' } }),
        dial,
      ),
    ).toBeGreaterThanOrEqual(0);
    expect(seen).toEqual({ host: 'probe.example', x: 'yes' });
    status = 200;
    await expect(runProbe(spec({ type: 'http', url: `${base}/generate_204` }), dial)).rejects.toThrow(
      /status 200, expected 204/,
    );
    expect(await runProbe(spec({ type: 'http', url: `${base}/health` }), dial)).toBeGreaterThanOrEqual(0);
    status = 500;
    await expect(runProbe(spec({ type: 'http', url: `${base}/health` }), dial)).rejects.toThrow(
      /status 500, expected 200/,
    );
    await expect(
      runProbe(spec({ type: 'http', url: `${base}/x`, expectedStatus: 500 }), dial),
    ).resolves.toBeGreaterThanOrEqual(0);
  });

  it('http: refuses a header that would break the request', async () => {
    const base = await http((_q, r) => r.end());
    await expect(urlTest(dial, `${base}/`, { headers: { 'X-A': 'a\r\nInjected: 1' } })).rejects.toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
    });
  });

  it('cmd: exit 0 passes, another exit fails with its code, a hanging command is killed at its timeout', async () => {
    expect(await runProbe(spec({ type: 'cmd', argv: ['true'] }), dial)).toBeGreaterThanOrEqual(0);
    await expect(runProbe(spec({ type: 'cmd', argv: ['sh', '-c', 'exit 3'] }), dial)).rejects.toThrow(/exit 3/);
    // The message says it was killed (not that it exited): the timeout, not the 30 s sleep, ended it.
    await expect(runProbe(spec({ type: 'cmd', argv: ['sleep', '30'], timeoutMs: 300 }), dial)).rejects.toThrow(
      /killed after 300 ms/,
    );
    await expect(runProbe(spec({ type: 'cmd', argv: ['/nonexistent/probe'] }), dial)).rejects.toThrow(/not found/);
  });

  it('validates specs with messages that say what is wrong', () => {
    expect(() => spec({ type: 'tcp', addr: 'nohost' })).toThrow(/HOST:PORT/);
    expect(() => spec({ type: 'http', url: 'https://example.org/' })).toThrow(/http:\/\//);
    expect(() => spec({ type: 'cmd', argv: [] })).toThrow();
    expect(() => spec({ type: 'ping' })).toThrow();
    expect(spec({ type: 'cmd', argv: ['true'] })).toMatchObject({ intervalMs: 30_000, timeoutMs: 5_000 });
  });
});

describe('FailFilter', () => {
  it('marks a node dead after maxFails failures within failTimeout, and alive after one success', () => {
    let now = 0;
    const f = new FailFilter(failFilterSchema.parse({ maxFails: 3, failTimeoutMs: 10_000 }), () => now);
    f.record('a', false);
    now = 5_000;
    f.record('a', false);
    now = 11_000; // the first failure has left the window
    expect(f.record('a', false)).toEqual({ dead: false, changed: false });
    now = 12_000;
    expect(f.record('a', false)).toEqual({ dead: true, changed: true });
    expect(f.allows('a')).toBe(false);
    expect(f.record('a', true, 30)).toEqual({ dead: false, changed: true });
    expect(f.allows('a')).toBe(true);
  });

  it('a dead node nobody probes any more is let through again failTimeout after its last failure', () => {
    let now = 0;
    const f = new FailFilter(failFilterSchema.parse({ maxFails: 2, failTimeoutMs: 10_000 }), () => now);
    f.record('a', false);
    f.record('a', false);
    now = 9_999;
    expect(f.isDead('a')).toBe(true);
    now = 10_000;
    expect([f.isDead('a'), f.allows('a')]).toEqual([false, true]);
  });

  it('skips nodes slower than maxLatency and lets through nodes with no result', () => {
    const f = new FailFilter(failFilterSchema.parse({ maxLatencyMs: 200 }));
    expect(f.allows('unknown')).toBe(true);
    f.record('slow', true, 450);
    f.record('fast', true, 40);
    expect([f.allows('slow'), f.allows('fast')]).toEqual([false, true]);
    f.retain(new Set(['fast']));
    expect(f.allows('slow')).toBe(true); // forgotten with the node
  });
});

describe('ProbeLoop', () => {
  it('probes at once, then every interval; a node failing its probes is reported dead; close stops it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const f = new FailFilter(failFilterSchema.parse({ maxFails: 2, failTimeoutMs: 60_000 }));
      const results: Array<{ ok: boolean; dead: boolean }> = [];
      let dials = 0;
      const refusing: Dialer = {
        via: 'tunnel',
        dial: async () => {
          dials++;
          throw new Error('refused inside the tunnel');
        },
      };
      const loop = new ProbeLoop(
        'n1',
        [spec({ type: 'tcp', addr: '10.0.0.1:80', intervalMs: 1_000 })],
        refusing,
        f,
        (r) => results.push({ ok: r.ok, dead: r.dead }),
      );
      loop.start();
      await vi.waitFor(() => expect(results).toEqual([{ ok: false, dead: false }])); // at once, before any interval
      await vi.advanceTimersByTimeAsync(1_000);
      await vi.waitFor(() =>
        expect(results).toEqual([
          { ok: false, dead: false },
          { ok: false, dead: true },
        ]),
      );
      expect(f.isDead('n1')).toBe(true);
      loop.close();
      await vi.advanceTimersByTimeAsync(5_000);
      expect(dials).toBe(2); // closed: no more probes
    } finally {
      vi.useRealTimers();
    }
  });
});
