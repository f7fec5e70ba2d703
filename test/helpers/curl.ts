import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';

export interface CurlResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Runs the real curl; never rejects, the exit code is in the result. */
export function curl(args: string[], input?: Buffer): Promise<CurlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'curl',
      ['--silent', '--show-error', '--max-time', '20', ...args],
      { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout, stderr: stderr.toString() });
      },
    );
    if (input) child.stdin?.end(input);
  });
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
