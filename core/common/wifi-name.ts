import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Runs a tool and gives its output, or null when it is missing, fails or takes too long. */
export type RunTool = (cmd: string, args: string[]) => string | null;

const runTool: RunTool = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', timeout: 1_000, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
};

/** `iw dev IF link`: "Connected to …" then a tab-indented "SSID: name" line; "Not connected." otherwise. */
export function ssidOfIwLink(out: string): string | null {
  const m = /^\s*SSID: (.+)$/m.exec(out);
  return m ? m[1]!.trimEnd() || null : null;
}

/** `networksetup -getairportnetwork IF` (macOS): "Current Wi-Fi Network: name" (older: "AirPort Network"). */
export function ssidOfNetworksetup(out: string): string | null {
  const m = /^Current (?:Wi-Fi|AirPort) Network: (.+)$/m.exec(out);
  return m ? m[1]!.trimEnd() || null : null;
}

/**
 * `netsh wlan show interfaces` (Windows): a block per interface, "Name : Wi-Fi" then, when
 * connected, "SSID : name" (and "BSSID : …", which is not it). Only the block of `iface` counts.
 */
export function ssidOfNetsh(out: string, iface: string): string | null {
  const blocks = out.split(/\r?\n(?=\s*Name\s*:)/);
  const mine = blocks.find((b) => new RegExp(`^\\s*Name\\s*:\\s*${escapeRe(iface)}\\s*$`, 'm').test(b));
  const m = mine ? /^\s*SSID\s*:\s*(.+?)\s*$/m.exec(mine) : null;
  return m ? m[1]! || null : null;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The Wi-Fi network (SSID) each of `ifaces` is joined to, where the OS tells a user-space process
 * without asking for rights: Linux `iw` (only for an interface the kernel calls wireless), macOS
 * `networksetup`, Windows `netsh`. Left out: a wired interface, one where no tool is installed,
 * and one the OS will not name (recent macOS hides the name from programs without location access).
 */
export function wifiNamesOf(
  ifaces: readonly string[],
  run: RunTool = runTool,
  platform: NodeJS.Platform = process.platform,
  isWireless: (iface: string) => boolean = linuxWireless,
): Record<string, string> {
  const out: Record<string, string> = {};
  // Windows names every wireless interface in one answer.
  const netsh = platform === 'win32' && ifaces.length > 0 ? run('netsh', ['wlan', 'show', 'interfaces']) : null;
  for (const iface of ifaces) {
    let name: string | null = null;
    if (platform === 'linux') {
      if (!isWireless(iface)) continue;
      const iw = run('iw', ['dev', iface, 'link']);
      name = iw !== null ? ssidOfIwLink(iw) : run('iwgetid', [iface, '--raw'])?.trim() || null;
    } else if (platform === 'darwin') {
      const ns = run('networksetup', ['-getairportnetwork', iface]);
      name = ns === null ? null : ssidOfNetworksetup(ns);
    } else if (netsh !== null) name = ssidOfNetsh(netsh, iface);
    if (name) out[iface] = name;
  }
  return out;
}

/** The kernel calls an interface wireless (cfg80211 or the old wireless extensions). */
function linuxWireless(iface: string): boolean {
  return existsSync(`/sys/class/net/${iface}/wireless`) || existsSync(`/sys/class/net/${iface}/phy80211`);
}
