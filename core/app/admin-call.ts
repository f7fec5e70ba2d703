import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatEndpoint } from '../common/index.js';
import type { GatehopConfig } from './config.js';

/** What a running core answered: its status and JSON body. */
export interface AdminAnswer {
  ok: boolean;
  status: number;
  body: unknown;
}

/**
 * One request to the admin API of a core running with this config (its address, its token or the
 * data dir's admin-token), for the subcommands that hand work to it. Null when none answers: the
 * subcommand then does the work on the data dir itself.
 */
export async function callRunningCore(
  config: GatehopConfig,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body: { type: string; data: string } | null,
  timeoutMs = 10_000,
): Promise<AdminAnswer | null> {
  if (!config.admin) return null;
  let token = config.adminToken;
  if (!token) {
    try {
      token = readFileSync(join(config.dataDir, 'admin-token'), 'utf8').trim();
    } catch {
      return null;
    }
  }
  const host = config.admin.host === '0.0.0.0' ? '127.0.0.1' : config.admin.host === '::' ? '::1' : config.admin.host;
  let res: Response;
  try {
    res = await fetch(`http://${formatEndpoint({ host, port: config.admin.port })}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': body.type } : {}) },
      ...(body ? { body: body.data } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch {
    return null; // nothing listening
  }
  return { ok: res.ok, status: res.status, body: await res.json().catch(() => null) };
}

/** The message of an admin API refusal. */
export function refusalOf(a: AdminAnswer): string {
  return (a.body as { message?: string } | null)?.message ?? `HTTP ${a.status}`;
}
