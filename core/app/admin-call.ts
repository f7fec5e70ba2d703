import { readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { formatEndpoint, runSocketPath } from '../common/index.js';
import type { GatehopConfig } from './config.js';

/** What a running core answered: its status and JSON body. */
export interface AdminAnswer {
  ok: boolean;
  status: number;
  body: unknown;
}

/** No core could be asked, and why in words (the subcommand says it, or does the work itself). */
export interface NoCore {
  absent: string;
}

/** Where the admin API of the core with this data dir listens for the gatehop command (not on Windows). */
export function adminSocketPath(dataDir: string): string {
  return runSocketPath(dataDir, 'admin.sock');
}

/**
 * One request to the admin API of a core running with this config's data dir, for the subcommands
 * that hand work to it; NoCore when there is none (the subcommand then does the work on the data
 * dir itself, or says why it cannot).
 *
 * Where Unix sockets exist, only the core's socket in `<data-dir>/run/` is asked (#59): that
 * folder is this user's alone, so whoever answers there is the core. The TCP port is never tried
 * with the token: while Gatehop is down, another local user may listen on 9090 and would get the
 * token, and with it the captured programs' packets. On Windows the TCP port is asked, as before.
 */
export async function callRunningCore(
  config: GatehopConfig,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body: { type: string; data: string } | null,
  timeoutMs = 10_000,
): Promise<AdminAnswer | NoCore> {
  if (!config.admin) return { absent: 'its admin API is off (admin: off), so nothing can reach it' };
  const socket = process.platform === 'win32' ? null : adminSocketPath(config.dataDir);
  if (socket && !isSocket(socket)) return { absent: `Gatehop is not running with the data dir ${config.dataDir}` };
  let token = config.adminToken;
  const tokenFile = join(config.dataDir, 'admin-token');
  if (!token) {
    try {
      token = readFileSync(tokenFile, 'utf8').trim();
    } catch {
      return socket
        ? {
            absent: `Gatehop is running, but ${tokenFile} is not there: it was started with its own token (--admin-token-file, adminToken); give this command the same`,
          }
        : { absent: `no admin token in ${tokenFile}: is Gatehop running with this data dir?` };
    }
  }
  const headers = { authorization: `Bearer ${token}`, ...(body ? { 'content-type': body.type } : {}) };
  if (socket) return overSocket(socket, method, path, headers, body?.data ?? null, timeoutMs);
  const host = config.admin.host === '0.0.0.0' ? '127.0.0.1' : config.admin.host === '::' ? '::1' : config.admin.host;
  const at = formatEndpoint({ host, port: config.admin.port });
  let res: Response;
  try {
    res = await fetch(`http://${at}${path}`, {
      method,
      headers,
      ...(body ? { body: body.data } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch {
    return { absent: `Gatehop is not running (nothing answers at ${at})` };
  }
  return { ok: res.ok, status: res.status, body: await res.json().catch(() => null) };
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false; // not there
  }
}

/** The request over the core's Unix socket; a socket left by a core that is gone refuses (not running). */
function overSocket(
  socketPath: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  data: string | null,
  timeoutMs: number,
): Promise<AdminAnswer | NoCore> {
  return new Promise((resolve) => {
    const req = request({ socketPath, method, path, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => resolve({ absent: 'Gatehop ended the answer early' }));
      res.on('end', () => {
        let parsed: unknown = null;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          /* not JSON: the status says enough */
        }
        const status = res.statusCode ?? 0;
        resolve({ ok: status >= 200 && status < 300, status, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({
        absent:
          err.code === 'ECONNREFUSED'
            ? 'Gatehop is not running (its socket is left from an earlier run)'
            : err.code === 'ENOENT'
              ? 'Gatehop is not running (it has just stopped)'
              : `Gatehop did not answer on ${socketPath}: ${err.message}`,
      }),
    );
    req.end(data ?? undefined);
  });
}

/** The message of an admin API refusal. */
export function refusalOf(a: AdminAnswer): string {
  return (a.body as { message?: string } | null)?.message ?? `HTTP ${a.status}`;
}
