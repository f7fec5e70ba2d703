import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig, startApp } from '../../core/app/index.js';
import { silentLogger } from '../../core/common/index.js';

const listen = (server: Server, port = 0): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });

describe('a start that fails half-way takes down what it had started (#47: one teardown list)', () => {
  it('the admin port is taken: the start fails with the reason, and the proxy port it had opened is free again', async () => {
    const blocker = createServer();
    const adminPort = await listen(blocker);
    const probe = createServer();
    const proxyPort = await listen(probe);
    await new Promise<void>((r) => probe.close(() => r()));
    try {
      await expect(
        startApp(
          buildConfig(
            {},
            {
              egress: 'direct',
              listen: `127.0.0.1:${proxyPort}`,
              admin: `127.0.0.1:${adminPort}`,
              logFile: 'off',
              dataDir: mkdtempSync(join(tmpdir(), 'gh-start-fail-')),
            },
          ),
          silentLogger(),
        ),
      ).rejects.toThrow(/admin API cannot listen/);
      // The proxy had listened before the admin API failed: its port is free again.
      const again = createServer();
      expect(await listen(again, proxyPort)).toBe(proxyPort);
      await new Promise<void>((r) => again.close(() => r()));
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });
});
