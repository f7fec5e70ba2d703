import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';

/** One curl download (through `proxy` with --socks5 when given): its speed in MiB/s; a short transfer throws. */
export function curlSpeed(url: string, bytes: number, proxy?: string): number {
  const args = ['-s', '-o', '/dev/null', '-w', '%{speed_download} %{size_download}', url];
  if (proxy) args.unshift('--socks5', proxy);
  const [speed, size] = execFileSync('curl', args, { encoding: 'utf8' }).trim().split(' ').map(Number);
  if (size !== bytes) throw new Error(`short transfer: ${size} of ${bytes}`);
  return speed! / (1 << 20);
}

/** Greeting, wait for the method reply (as real clients do), CONNECT to targetHost:targetPort, then time to the first payload byte (ms). */
export function socksTtfb(proxyPort: number, targetPort: number, targetHost = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const t0 = process.hrtime.bigint();
    const s = connect({ port: proxyPort, host: '127.0.0.1', noDelay: true });
    const deadline = setTimeout(() => s.destroy(new Error('no answer within 5 s')), 5_000);
    const request = Buffer.from([5, 1, 0, 1, ...targetHost.split('.').map(Number), targetPort >> 8, targetPort & 0xff]);
    let got = 0;
    let sentRequest = false;
    s.on('connect', () => s.write(Buffer.from([5, 1, 0])));
    s.on('data', (c: Buffer) => {
      got += c.length;
      if (!sentRequest && got >= 2) {
        sentRequest = true;
        s.write(request);
      }
      if (got >= 2 + 10 + 1) {
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        clearTimeout(deadline);
        s.destroy();
        resolvePromise(ms);
      }
    });
    s.on('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    s.on('close', () => reject(new Error(`connection closed after ${got} bytes`)));
  });
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
