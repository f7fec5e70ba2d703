import { SocksClient } from 'socks';

export interface SocksGetResult {
  status: number;
  body: Buffer;
}

/**
 * One HTTP/1.0 GET through a SOCKS5 proxy (the name is resolved by the proxy's egress), in-process:
 * for tests that fire many short requests, where spawning curl for each would be the bottleneck.
 */
export async function socksGet(
  proxyPort: number,
  host: string,
  path: string,
  timeoutMs = 10_000,
): Promise<SocksGetResult> {
  const { socket } = await SocksClient.createConnection({
    proxy: { host: '127.0.0.1', port: proxyPort, type: 5 },
    command: 'connect',
    destination: { host, port: 80 },
    timeout: timeoutMs,
  });
  try {
    return await new Promise<SocksGetResult>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`GET ${host}${path}: no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const parts: Buffer[] = [];
      socket.on('data', (c: Buffer) => parts.push(c));
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.once('end', () => {
        clearTimeout(timer);
        const all = Buffer.concat(parts);
        const headEnd = all.indexOf('\r\n\r\n');
        const status = Number(
          /^HTTP\/1\.[01] (\d{3})/.exec(all.subarray(0, Math.max(0, headEnd)).toString('latin1'))?.[1] ?? 0,
        );
        if (headEnd < 0 || status === 0)
          reject(new Error(`GET ${host}${path}: malformed response (${all.length} bytes)`));
        else resolve({ status, body: all.subarray(headEnd + 4) });
      });
      socket.write(`GET ${path} HTTP/1.0\r\nHost: ${host}\r\n\r\n`);
    });
  } finally {
    socket.destroy();
  }
}
