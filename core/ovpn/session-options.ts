import { pemCertificates } from '../reach/index.js';
import type { ControlSessionOptions } from './control-types.js';
import type { TunnelClientOptions } from './tunnel-client-types.js';

/** How many renegotiations a server may start in a minute before the session is given up. */
const DEFAULT_MAX_SERVER_RENEG_PER_MINUTE = 6;

/**
 * One attempt's control-session options from the client's: the profile, the credentials and the
 * node trust rule (the profile's own CA, extra roots, the DDNS name), with what the attempt knows
 * (the carrier's protocol, a fresh wrapper, legacy TLS after a refusal).
 */
export function sessionOptionsOf(
  opts: TunnelClientOptions,
  attempt: Pick<ControlSessionOptions, 'proto' | 'remoteHost' | 'wrapper' | 'legacyTls' | 'tlsHandshakeMs' | 'logger'>,
): ControlSessionOptions {
  return {
    ...attempt,
    profile: opts.profile,
    credentials: opts.credentials,
    trust: {
      profileCa: opts.profile.ca ? pemCertificates(opts.profile.ca) : [],
      extraRoots: opts.trust?.extraRoots ?? [],
      serverName: opts.trust?.serverName ?? null,
      profileCaInClear: opts.trust?.profileCaInClear === true,
      profileChecks: opts.profile,
    },
    maxServerRenegotiationsPerMinute: opts.maxServerRenegotiationsPerMinute ?? DEFAULT_MAX_SERVER_RENEG_PER_MINUTE,
  };
}
