/**
 * Reload without dropping sessions (issue #15): a new config is validated first and refused whole
 * when bad; what can change live does, a new listen address is bound before the old one closes and
 * sessions on the old listener go on; what cannot change live is named.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SocksClient } from 'socks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConfig, readConfigFile, startApp, type RunningApp } from '../../core/app/index.js';
import { ErrorCodes, silentLogger } from '../../core/common/index.js';
import { apiRequest } from '../helpers/admin-client.js';
import { freePort } from '../helpers/ports.js';
import { startEchoServer, type TestTcpServer } from '../helpers/servers.js';

describe('reload (SIGHUP, POST /reload, saved settings)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gh-reload-'));
  const file = join(dir, 'gatehop.yaml');
  const fromFlags = { egress: 'direct' as const, admin: '127.0.0.1:0', dataDir: dir, logFile: 'off' as const };
  let app: RunningApp;
  let echo: TestTcpServer;
  let first = 0;

  beforeAll(async () => {
    echo = await startEchoServer();
    first = await freePort();
    writeFileSync(file, `listen: 127.0.0.1:${first}\nproxy:\n  idleTimeoutMs: 300000\n`);
    const fromFile = readConfigFile(file);
    app = await startApp(buildConfig(fromFile, fromFlags), silentLogger(), {
      layers: { fromFile, fromFlags },
      readLayers: () => ({ fromFile: readConfigFile(file), fromFlags }),
      uiDir: null,
    });
  });

  afterAll(async () => {
    await app.stop();
    await echo.close();
  });

  const socksTo = async (proxyPort: number): Promise<Socket> =>
    (
      await SocksClient.createConnection({
        proxy: { host: '127.0.0.1', port: proxyPort, type: 5 },
        command: 'connect',
        destination: { host: '127.0.0.1', port: echo.port },
      })
    ).socket;
  const echoOnce = (s: Socket, text: string): Promise<string> =>
    new Promise((resolve) => {
      s.once('data', (b: Buffer) => resolve(b.toString()));
      s.write(text);
    });

  it('moves the listener: the new port serves, the old one refuses, and a session on the old one goes on', async () => {
    const old = await socksTo(first);
    expect(await echoOnce(old, 'before')).toBe('before');
    const second = await freePort();
    writeFileSync(file, `listen: 127.0.0.1:${second}\nproxy:\n  idleTimeoutMs: 200000\nlogLevel: debug\n`);
    const r = await app.reload();
    expect(r).toEqual({ applied: ['listen', 'proxy'], restartRequired: ['logLevel'], listen: `127.0.0.1:${second}` });
    expect(app.listening.proxy.port).toBe(second);
    const fresh = await socksTo(second);
    expect(await echoOnce(fresh, 'new')).toBe('new');
    await expect(
      new Promise((resolve, reject) => connect(first, '127.0.0.1').once('connect', resolve).once('error', reject)),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await echoOnce(old, 'after')).toBe('after'); // the session accepted on the old listener is untouched
    old.destroy();
    fresh.destroy();
  });

  it('refuses a config that does not validate, saying why, and keeps the running one', async () => {
    const before = app.listening.proxy.port;
    writeFileSync(file, `listen: 127.0.0.1:${before}\nproxy:\n  maxSessions: -5\n`);
    await expect(app.reload()).rejects.toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
      message: expect.stringMatching(/proxy\.maxSessions/),
    });
    writeFileSync(file, 'listen: [unclosed\n');
    await expect(app.reload()).rejects.toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
      message: expect.stringMatching(/not valid YAML/),
    });
    const s = await socksTo(before);
    expect(await echoOnce(s, 'still')).toBe('still');
    s.destroy();
  });

  it('POST /reload answers what it applied; a port in use is refused and the old listener stays', async () => {
    const token = readFileSync(join(dir, 'admin-token'), 'utf8').trim();
    const admin = app.listening.admin!.port;
    const at = app.listening.proxy.port;
    writeFileSync(file, `listen: 127.0.0.1:${at}\nswitching:\n  drainGraceMs: 60000\n`);
    const ok = await apiRequest(admin, 'POST', '/reload', { token });
    expect(ok.status).toBe(200);
    expect(ok.json()).toMatchObject({ applied: expect.arrayContaining(['switching']), listen: `127.0.0.1:${at}` });
    writeFileSync(file, `listen: 127.0.0.1:${admin}\n`); // the admin API's own port: in use
    const busy = await apiRequest(admin, 'POST', '/reload', { token });
    expect(busy.status).toBeGreaterThanOrEqual(400);
    expect(busy.json()).toMatchObject({
      error: ErrorCodes.LISTEN_FAILED,
      message: expect.stringMatching(/address already in use/),
    });
    expect(app.listening.proxy.port).toBe(at);
    const s = await socksTo(at);
    expect(await echoOnce(s, 'kept')).toBe('kept');
    s.destroy();
  });
});
