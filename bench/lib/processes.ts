import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { connect } from 'node:net';

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Starts a process and resolves once `isReady(stdout)` holds or the port accepts connections. */
export async function startProcess(
  cmd: string,
  args: string[],
  readyPort?: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; stdout: () => string }> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  // Only the first line of stdout matters (readiness); stderr is kept short for error reports.
  child.stdout!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(0, 4096)));
  child.stderr!.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-4096)));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${cmd} exited ${child.exitCode}: ${err}`);
    if (readyPort === undefined ? out.includes('\n') : await accepts(readyPort)) break;
    if (Date.now() > deadline) throw new Error(`${cmd} did not become ready`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, stdout: () => out };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
