import { isIP } from 'node:net';
import { parse } from 'csv-parse/sync';
import { ErrorCodes, GatehopError } from '../common/index.js';
import { defaultAddressPolicy, type AddressPolicy } from '../reach/index.js';
import { parseProfile } from '../ovpn/index.js';
import type { VpnGateNode } from './node.js';

export interface ParsedList {
  nodes: VpnGateNode[];
  /** Rows skipped, by reason. */
  skipped: Record<string, number>;
}

export interface ParseOptions {
  addressPolicy?: AddressPolicy;
}

const REQUIRED = ['HostName', 'IP', 'OpenVPN_ConfigData_Base64'] as const;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function num(v: string | undefined): number | null {
  if (v === undefined || v === '' || v === '-') return null;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/**
 * Parses the VPN Gate API response: `*vpn_servers` banner, `#`-prefixed header, rows, final `*`.
 * An HTML page, an empty body or a list without its final `*` (truncated) is GH_ERR_LIST_INVALID;
 * a bad row is skipped and counted, never fatal.
 *
 * One address per node: a node is dialled, probed, shown and remembered at its row's `IP`. A row
 * whose profile's `remote` is another IP address is skipped (`remote-mismatch`): the two columns
 * disagree about where the node is, and neither can be trusted. A profile `remote` given as a name
 * is dialled at the row's IP. An IP the policy refuses is skipped as `<class>-address`.
 */
export function parseVpnGateCsv(text: string, opts: ParseOptions = {}): ParsedList {
  const policy = opts.addressPolicy ?? defaultAddressPolicy;
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') throw new GatehopError(ErrorCodes.LIST_INVALID, 'the list is empty');
  if (/^\s*</.test(body)) throw new GatehopError(ErrorCodes.LIST_INVALID, 'the list is an HTML page, not CSV');
  const lines = body.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  if (lines[0]?.trim() !== '*vpn_servers')
    throw new GatehopError(ErrorCodes.LIST_INVALID, 'the list does not start with *vpn_servers');
  if (lines[lines.length - 1]?.trim() !== '*')
    throw new GatehopError(ErrorCodes.LIST_INVALID, 'the list is truncated (no final *)');
  const header = lines[1];
  if (!header?.startsWith('#')) throw new GatehopError(ErrorCodes.LIST_INVALID, 'the list has no #header line');
  const csvText = [header.slice(1), ...lines.slice(2, -1)].join('\n');
  let records: Array<Record<string, string>>;
  try {
    records = (parse as (text: string, opts: object) => Array<Record<string, string>>)(csvText, {
      columns: true,
      skip_empty_lines: true,
      relax_column_count: true,
      relax_quotes: true,
      trim: true,
    });
  } catch (err) {
    throw new GatehopError(ErrorCodes.LIST_INVALID, `the list is not valid CSV: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const columns = header
    .slice(1)
    .split(',')
    .map((c) => c.trim());
  for (const c of REQUIRED)
    if (!columns.includes(c)) throw new GatehopError(ErrorCodes.LIST_INVALID, `the list has no ${c} column`);

  const nodes: VpnGateNode[] = [];
  const skipped: Record<string, number> = {};
  const skip = (reason: string): void => {
    skipped[reason] = (skipped[reason] ?? 0) + 1;
  };
  const ids = new Set<string>();
  for (const r of records) {
    const id = r['HostName'] ?? '';
    const ip = r['IP'] ?? '';
    if (!id || !/^[\w.-]{1,128}$/.test(id)) {
      skip('bad-hostname');
      continue;
    }
    if (ids.has(id)) {
      skip('duplicate');
      continue;
    }
    if (isIP(ip) !== 4) {
      skip('bad-ip');
      continue;
    }
    const refused = policy(ip);
    if (refused !== null) {
      skip(`${refused}-address`);
      continue;
    }
    const b64 = (r['OpenVPN_ConfigData_Base64'] ?? '').replace(/\s+/g, '');
    if (!b64 || b64.length % 4 !== 0 || !BASE64.test(b64)) {
      skip('bad-base64');
      continue;
    }
    const profileText = Buffer.from(b64, 'base64').toString('utf8');
    let profile;
    try {
      profile = parseProfile(profileText);
    } catch {
      skip('bad-profile');
      continue;
    }
    const remote = profile.remotes[0]!;
    if (!profile.ca) {
      skip('no-ca');
      continue;
    }
    if (isIP(remote.host) !== 0 && remote.host !== ip) {
      skip('remote-mismatch');
      continue;
    }
    ids.add(id);
    nodes.push({
      id,
      ip,
      port: remote.port,
      proto: remote.proto,
      countryLong: r['CountryLong'] ?? '',
      countryShort: (r['CountryShort'] ?? '').toUpperCase(),
      score: num(r['Score']),
      pingMs: num(r['Ping']),
      speedBps: num(r['Speed']),
      numVpnSessions: num(r['NumVpnSessions']),
      uptimeMs: num(r['Uptime']),
      totalUsers: num(r['TotalUsers']),
      totalTrafficBytes: num(r['TotalTraffic']),
      operator: (r['Operator'] ?? '').slice(0, 200),
      profile: profileText,
      source: 'list',
    });
  }
  return { nodes, skipped };
}

/** `2 loopback-address, 1 remote-mismatch`: a list's skipped rows for a message. */
export function describeSkipped(skipped: Record<string, number>): string {
  const parts = Object.entries(skipped).map(([k, n]) => `${n} ${k}`);
  return parts.length ? parts.join(', ') : 'nothing';
}
