import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ErrorCodes, GatehopError } from '../common/index.js';
import { parseProfile } from '../ovpn/index.js';
import type { VpnGateNode } from './node.js';

/** A node from the user's own .ovpn file (`--ovpn FILE`). */
export function staticNodeFromFile(path: string): VpnGateNode {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new GatehopError(ErrorCodes.PROFILE_INVALID, `cannot read profile ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let profile;
  try {
    profile = parseProfile(text);
  } catch (err) {
    throw new GatehopError(ErrorCodes.PROFILE_INVALID, `profile ${path}: ${(err as Error).message}`, { cause: err });
  }
  const remote = profile.remotes[0]!;
  return {
    id: `file:${basename(path)}`,
    ip: remote.host,
    port: remote.port,
    proto: remote.proto,
    countryLong: '',
    countryShort: '',
    score: null,
    pingMs: null,
    speedBps: null,
    numVpnSessions: null,
    uptimeMs: null,
    totalUsers: null,
    totalTrafficBytes: null,
    operator: 'your own profile',
    profile: text,
    source: 'static',
  };
}
