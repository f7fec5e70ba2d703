import { networkKeyOf, type NetworkSnapshot } from '../common/index.js';

/**
 * What the user is shown for a network: the interfaces a default route leaves by, each with the
 * /24 of its IPv4 address (what networkKeyOf hashes), after its Wi-Fi network's name where the OS
 * gives it: "wlan0 192.168.1.x", "Café Lumen · wlan0 10.0.0.x". "offline" without any.
 */
export function networkLabelOf(s: NetworkSnapshot): string {
  const wayOut = s.defaultInterfaces?.length ? new Set(s.defaultInterfaces) : null;
  const parts = new Set<string>();
  for (const a of s.addresses) {
    const [name, addr] = a.split(' ');
    if (!name || !addr || (wayOut && !wayOut.has(name)) || !/^\d+\.\d+\.\d+\.\d+$/.test(addr)) continue;
    const ssid = s.wifi?.[name];
    parts.add(`${ssid ? `${ssid} · ` : ''}${name} ${addr.split('.').slice(0, 3).join('.')}.x`);
  }
  return [...parts].sort().join(', ') || 'offline';
}

/** The network's key (what the protocol memory, the ledger and the profiles are kept under) and its label. */
export function networkSeenOf(s: NetworkSnapshot): { key: string; label: string } {
  return { key: networkKeyOf(s), label: networkLabelOf(s) };
}
