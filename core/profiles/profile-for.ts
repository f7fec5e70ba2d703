import type { NetworkProfile } from './profile.js';

/**
 * The one rule of which profile applies (#64): the profile saved for the network the machine is on
 * now, matched by the network's key (the interfaces a default route leaves by, each with its /24;
 * core/common networkKeyOf), the key the protocol memory and the traffic ledger use. Offline is no
 * network: nothing applies there, and what was applied stays until a network is seen.
 */
export function profileFor(profiles: readonly NetworkProfile[], networkKey: string): NetworkProfile | null {
  if (networkKey === 'offline') return null;
  return profiles.find((p) => p.network === networkKey) ?? null;
}
