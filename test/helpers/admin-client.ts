import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: <T = unknown>() => T;
}

/** One request to the admin API with full control of the headers (Host and Origin included). */
export function apiRequest(
  port: number,
  method: string,
  path: string,
  /** `host`: the API's address when it is not 127.0.0.1 (an API listening in another namespace). */
  opts: { token?: string | null; body?: string | object; headers?: Record<string, string>; host?: string } = {},
): Promise<ApiResponse> {
  const at = opts.host ?? '127.0.0.1';
  const headers: Record<string, string> = { host: `${at}:${port}`, ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const body =
    opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  return new Promise((resolve, reject) => {
    const req = request({ host: at, port, method, path, headers, setHost: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: <T>() => JSON.parse(text) as T });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface SseEvent {
  event: string;
  data: unknown;
  at: number;
}

/** Reads GET /events as it arrives. */
export class SseReader {
  readonly events: SseEvent[] = [];
  #buf = '';
  #close: () => void = () => {};

  static open(port: number, token: string): Promise<SseReader> {
    const r = new SseReader();
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: `/events?token=${encodeURIComponent(token)}`,
          headers: { accept: 'text/event-stream' },
        },
        (res) => {
          if (res.statusCode !== 200) return reject(new Error(`events: ${res.statusCode}`));
          res.setEncoding('utf8');
          res.on('data', (c: string) => r.#feed(c));
          res.on('error', () => {});
          resolve(r);
        },
      );
      req.on('error', reject);
      req.end();
      r.#close = () => req.destroy();
    });
  }

  #feed(text: string): void {
    this.#buf += text;
    let i: number;
    while ((i = this.#buf.indexOf('\n\n')) >= 0) {
      const block = this.#buf.slice(0, i);
      this.#buf = this.#buf.slice(i + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data !== undefined) this.events.push({ event, data: JSON.parse(data) as unknown, at: Date.now() });
    }
  }

  close(): void {
    this.#close();
  }
}

/**
 * One call to a running core's admin API over its socket (`<data-dir>/run/admin.sock`, with the
 * token beside it), by curl: no port to find, and it reaches a core in any namespace.
 */
export function adminOverSocket<T = Record<string, unknown>>(
  dataDir: string,
  method: string,
  path: string,
  body?: object,
): { status: number; json: T } {
  const r = spawnSync(
    'curl',
    [
      '-sS',
      '-w',
      '\n%{http_code}',
      '--unix-socket',
      join(dataDir, 'run', 'admin.sock'),
      '-X',
      method,
      '-H',
      `authorization: Bearer ${readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()}`,
      ...(body ? ['-H', 'content-type: application/json', '--data', JSON.stringify(body)] : []),
      `http://gatehop${path}`,
    ],
    { encoding: 'utf8' },
  );
  const lines = r.stdout.trimEnd().split('\n');
  const status = Number(lines.pop());
  const text = lines.join('\n');
  return { status, json: (text ? JSON.parse(text) : null) as T };
}
