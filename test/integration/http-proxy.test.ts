import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { curl, sha256 } from '../helpers/curl.js';
import { startProxy, testCredentials, TEST_USER, type RunningProxy } from '../helpers/proxy.js';
import { makeBlob, Servers, startHttpServer } from '../helpers/servers.js';
import { RawClient } from '../helpers/socks-client.js';
import { selfSignedCert } from '../helpers/self-signed.js';

const servers = new Servers();
afterEach(() => servers.closeAll());

async function proxy(opts: Parameters<typeof startProxy>[0] = {}): Promise<RunningProxy> {
  return servers.track(await startProxy(opts));
}

let tls: { key: string; cert: string };
beforeAll(() => {
  tls = selfSignedCert('localhost');
});

describe('HTTP proxy on the same port', () => {
  it('forwards absolute-URI GET and POST with curl -x', async () => {
    const blob = makeBlob(500_000);
    const web = servers.track(await startHttpServer(blob));
    const p = await proxy();
    const get = await curl(['-x', `http://127.0.0.1:${p.port}`, `${web.url}/blob`]);
    expect(sha256(get.stdout)).toBe(blob.sha256);
    const body = makeBlob(200_000);
    const post = await curl(['-x', `http://127.0.0.1:${p.port}`, '--data-binary', '@-', `${web.url}/echo`], body.data);
    expect(sha256(post.stdout)).toBe(body.sha256);
  });

  it('tunnels HTTPS with CONNECT', async () => {
    const server = createHttpsServer(tls, (_req, res) => res.end('secure hello'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    servers.track({ close: () => new Promise<void>((r) => server.close(() => r())) });
    const port = (server.address() as AddressInfo).port;
    const p = await proxy();
    const r = await curl(['-k', '-x', `http://127.0.0.1:${p.port}`, `https://localhost:${port}/`]);
    expect(r.stderr).toBe('');
    expect(r.stdout.toString()).toBe('secure hello');
  });

  it('strips hop-by-hop and proxy headers and rewrites Host from the absolute URI', async () => {
    const web = servers.track(await startHttpServer());
    const p = await proxy({ credentials: testCredentials() });
    const r = await curl([
      '-x',
      `http://127.0.0.1:${p.port}`,
      '--proxy-user',
      `${TEST_USER.username}:${TEST_USER.password}`,
      '-H',
      'Host: wrong.example',
      '-H',
      'Connection: X-Drop',
      '-H',
      'X-Drop: 1',
      '-H',
      'X-Keep: 2',
      `${web.url}/headers`,
    ]);
    const seen = JSON.parse(r.stdout.toString()) as string[];
    const names = seen.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(names).toContain('x-keep');
    expect(names).not.toContain('x-drop');
    expect(names).not.toContain('proxy-authorization');
    expect(seen[names.indexOf('host') * 2 + 1]).toBe(`127.0.0.1:${web.port}`);
  });

  it('keeps the client connection alive across requests', async () => {
    const web = servers.track(await startHttpServer());
    const p = await proxy();
    const r = await curl(['-v', '-x', `http://127.0.0.1:${p.port}`, `${web.url}/`, `${web.url}/`]);
    expect(r.stdout.toString()).toBe('hellohello');
    expect(r.stderr).toMatch(/Re-using existing connection|Reusing existing/);
    expect(p.server.stats.sessionsTotal).toBe(1);
  });

  it('answers 407 with Proxy-Authenticate without credentials', async () => {
    const web = servers.track(await startHttpServer());
    const p = await proxy({ credentials: testCredentials() });
    const r = await curl(['-i', '-x', `http://127.0.0.1:${p.port}`, `${web.url}/`]);
    expect(r.stdout.toString()).toMatch(/^HTTP\/1\.1 407/);
    expect(r.stdout.toString()).toMatch(/Proxy-Authenticate: Basic/i);
    const c = await curl(['-i', '-x', `http://127.0.0.1:${p.port}`, '-p', `${web.url}/`]);
    expect(c.stderr).toMatch(/407/);
  });

  it('answers 502 when the target refuses and 400 for an origin-form request', async () => {
    const p = await proxy();
    const refused = await curl(['-i', '-x', `http://127.0.0.1:${p.port}`, 'http://127.0.0.1:1/']);
    expect(refused.stdout.toString()).toMatch(/^HTTP\/1\.1 502/);
    const c = await RawClient.open(p.port);
    c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await c.waitEnd();
    expect(c.received.toString()).toMatch(/^HTTP\/1\.1 400/);
  });

  it('answers 431 to an oversized header block and closes', async () => {
    const p = await proxy({ maxHeaderBytes: 4096 });
    const c = await RawClient.open(p.port);
    c.write(`GET http://127.0.0.1:1/ HTTP/1.1\r\nX-Big: ${'a'.repeat(8000)}\r\n\r\n`);
    await c.waitEnd();
    expect(c.received.toString()).toMatch(/^HTTP\/1\.1 431/);
    expect(p.server.stats.malformed['http-header-too-large']).toBe(1);
  });

  it('answers 400 to a malformed request line', async () => {
    const p = await proxy();
    const c = await RawClient.open(p.port);
    c.write('GARBAGE\x01\x02 nonsense\r\n\r\n');
    await c.waitEnd();
    expect(c.received.toString()).toMatch(/^HTTP\/1\.1 400/);
  });
});
