import { countedAddresses, networkKeyOf, type NetworkSnapshot } from '../common/index.js';

/**
 * What the user is shown for a network: the interfaces a default route leaves by, each with the
 * /24 of its IPv4 address (what networkKeyOf hashes), after its Wi-Fi network's name where the OS
 * gives it: "wlan0 192.168.1.x", "Café Lumen · wlan0 10.0.0.x". "offline" without any.
 */
export function networkLabelOf(s: NetworkSnapshot): string {
  const parts = new Set(countedAddresses(s).map((a) => `${a.ssid ? `${a.ssid} · ` : ''}${a.iface} ${a.net24}.x`));
  return [...parts].sort().join(', ') || 'offline';
}

/** The network's key (what the protocol memory, the ledger and the profiles are kept under) and its label. */
export function networkSeenOf(s: NetworkSnapshot): { key: string; label: string } {
  return { key: networkKeyOf(s), label: networkLabelOf(s) };
}
