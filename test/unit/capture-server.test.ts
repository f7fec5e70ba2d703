import { mkdtempSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CaptureServer } from '../../core/capture/index.js';
import type { CaptureInbound } from '../../core/contracts/index.js';
import { silentLogger } from '../../core/common/index.js';

const inbound: CaptureInbound = {
  adoptCaptured: (s) => void s.destroy(),
  captureUdp: () => ({ open: () => Promise.resolve(), send: () => {}, close: () => {} }),
};

/** The server's first line to a helper presenting `hello`. */
function greet(path: string, hello: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let got = '';
    s.on('data', (c: Buffer) => {
      got += c.toString();
      if (got.includes('\n')) {
        s.destroy();
        resolve(got.split('\n')[0]!);
      }
    });
    s.on('error', reject);
    s.on('close', () => resolve(got));
    s.write(hello);
  });
}

let server: CaptureServer | null = null;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = null;
});

describe('the capture socket lets in only the holder of a fresh key (#46)', () => {
  it('is the user’s alone, takes a key once, and refuses a wrong, a reused or an expired one', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'gh-cap-')), 'run', 'capture.sock');
    server = new CaptureServer({ path, inbound, log: silentLogger() });
    await server.listen();
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const { key } = server.ticket('curl');
    const wrong = 'f'.repeat(64);
    expect(await greet(path, `GATEHOP-CAPTURE 1 ${wrong}\n`)).toMatch(/^ERR the session key is unknown or expired/);
    expect(await greet(path, 'GATEHOP-CAPTURE 1 short\n')).toMatch(/^ERR/);
    expect(await greet(path, `GATEHOP-CAPTURE 1 ${key}\n`)).toBe('OK');
    expect(await greet(path, `GATEHOP-CAPTURE 1 ${key}\n`)).toMatch(/^ERR/); // used once already
    const late = server.ticket('curl').key;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    expect(await greet(path, `GATEHOP-CAPTURE 1 ${late}\n`)).toMatch(/^ERR/);
  });
});
