import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import type { ConfigInput } from '../config.js';
import { fail } from './cli-support.js';

/** --upstream-nodes: whether tunnels go through --upstream too (config upstream.nodes). */
const UPSTREAM_NODES = { always: true, fallback: 'fallback', never: false } as const;
export function upstreamNodes(value: string): boolean | 'fallback' {
  if (!Object.hasOwn(UPSTREAM_NODES, value)) throw new InvalidArgumentError('must be always, fallback or never');
  return UPSTREAM_NODES[value as keyof typeof UPSTREAM_NODES];
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

export interface RunFlags {
  listen?: string;
  egress?: string;
  admin?: string;
  adminToken?: string;
  adminTokenFile?: string;
  dataDir?: string;
  authFile?: string;
  auth?: boolean; // commander turns --no-auth into auth=false
  config?: string;
  logLevel?: string;
  logFile?: string;
  maxSessions?: number;
  handshakeTimeoutMs?: number;
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  api?: string[];
  ovpn?: string[];
  systemProxy?: boolean;
  tun?: boolean;
  tunStrict?: boolean;
  tunName?: string;
  tunGid?: string;
  tunUser?: string;
  tunAllow?: string[];
  killSwitch?: boolean;
  upstream?: string;
  upstreamNodes?: boolean | 'fallback';
  listSource?: string[];
  protocols?: string;
  sstpCa?: string;
  nodeCa?: string;
  allowPrivateNodes?: boolean;
  mode?: string;
}

export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function flagsToConfig(f: RunFlags): ConfigInput {
  const out: Record<string, unknown> = {};
  const copy = (key: keyof RunFlags, to: string): void => {
    if (f[key] !== undefined) out[to] = f[key];
  };
  copy('listen', 'listen');
  copy('egress', 'egress');
  copy('admin', 'admin');
  const token = adminTokenFrom(f);
  if (token !== undefined) out.adminToken = token;
  copy('dataDir', 'dataDir');
  copy('authFile', 'authFile');
  copy('logLevel', 'logLevel');
  copy('logFile', 'logFile');
  copy('api', 'api');
  copy('mode', 'mode');
  copy('ovpn', 'ovpn');
  if (f.upstreamNodes !== undefined && f.upstream === undefined)
    fail('--upstream-nodes goes with --upstream (or set upstream.nodes in the config file)', 2);
  if (f.upstream !== undefined)
    out.upstream = { url: f.upstream, ...(f.upstreamNodes !== undefined ? { nodes: f.upstreamNodes } : {}) };
  if (f.listSource?.length || f.allowPrivateNodes)
    out.vpngate = {
      ...(f.listSource?.length ? { sources: f.listSource } : {}),
      ...(f.allowPrivateNodes ? { allowPrivateNodes: true } : {}),
    };
  // --node-ca is the name now (the CA is for every protocol); --sstp-ca keeps working.
  const nodeCa = f.nodeCa ?? f.sstpCa;
  if (f.protocols !== undefined || nodeCa !== undefined) {
    out.tunnel = {
      ...(f.protocols !== undefined
        ? {
            protocols: f.protocols
              .split(',')
              .map((p) => p.trim())
              .filter(Boolean),
          }
        : {}),
      ...(nodeCa !== undefined ? { nodeCa } : {}),
    };
  }
  if (f.auth === false) out.noAuth = true;
  if (f.systemProxy || f.killSwitch)
    out.systemProxy = { ...(f.systemProxy ? { enabled: true } : {}), ...(f.killSwitch ? { killSwitch: true } : {}) };
  const proxy: Record<string, number> = {};
  for (const k of ['maxSessions', 'handshakeTimeoutMs', 'connectTimeoutMs', 'idleTimeoutMs'] as const) {
    if (f[k] !== undefined) proxy[k] = f[k];
  }
  if (Object.keys(proxy).length > 0) out.proxy = proxy;
  return out;
}

/** The environment variable that carries the admin token without showing it in the process list. */
export const ADMIN_TOKEN_ENV = 'GATEHOP_ADMIN_TOKEN';

/**
 * The admin token from, in order: --admin-token-file (its first line), GATEHOP_ADMIN_TOKEN, or
 * --admin-token (visible to every local user in the process list: kept for scripts, not advised).
 */
function adminTokenFrom(f: RunFlags): string | undefined {
  if (f.adminTokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(f.adminTokenFile, 'utf8');
    } catch (err) {
      fail(`--admin-token-file ${f.adminTokenFile}: ${(err as Error).message}`, 2);
    }
    return text.split(/\r?\n/)[0]!.trim();
  }
  const env = process.env[ADMIN_TOKEN_ENV];
  if (env) return env.trim();
  return f.adminToken;
}
