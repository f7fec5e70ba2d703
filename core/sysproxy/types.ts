import { hostPort } from '../common/index.js';

/** What Gatehop asks the OS to use: its one mixed port for HTTP, HTTPS and SOCKS. */
export interface ProxyTarget {
  host: string;
  port: number;
  /** Hosts and ranges that go direct. */
  bypass: readonly string[];
  /**
   * Set: point the OS at this auto-config script (Gatehop's PAC, in rule mode) instead of the
   * proxy itself, so browsers skip the proxy for what the rules send direct.
   */
  pacUrl?: string;
}

/** The PAC URL Gatehop serves on its own proxy port. */
export function pacUrlOf(host: string, port: number): string {
  return `http://${hostPort(host, port)}/proxy.pac`;
}

/** localhost, loopback, the private ranges and `<local>` (plain host names; Windows/KDE syntax per backend). */
export const DEFAULT_BYPASS: readonly string[] = Object.freeze([
  'localhost',
  '127.0.0.0/8',
  '::1',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '169.254.0.0/16',
  'fc00::/7',
  'fe80::/10',
  '<local>',
]);

/**
 * One backend's settings, flattened: key → raw value as the OS tool prints it, null = not set.
 * Raw values are written back verbatim on restore, so nothing is lost in a parse/print round trip.
 */
export type FlatSettings = Record<string, string | null>;

export type BackendId = 'gnome' | 'kde' | 'windows' | 'macos';

/** Runs one program (never a shell) and gives back what it printed; rejects with CommandError. */
export type Runner = (
  file: string,
  args: readonly string[],
  opts?: { timeoutMs?: number; input?: string },
) => Promise<{ stdout: string; stderr: string }>;

/** One OS's proxy settings: a pure command builder under a thin layer that runs its commands. */
export interface ProxyBackend {
  readonly id: BackendId;
  /** Human name for messages ("GNOME settings (gsettings)"). */
  readonly label: string;
  read(): Promise<FlatSettings>;
  /** Makes the OS settings equal `to`; `from` is what they are now (only the difference is written). */
  write(to: FlatSettings, from: FlatSettings): Promise<void>;
  /** The settings that point at `target`, keeping what Gatehop does not set from `current`. */
  desired(target: ProxyTarget, current: FlatSettings): FlatSettings;
  /** `current` with the proxy turned off (used when a crash left settings and no snapshot). */
  off(current: FlatSettings): FlatSettings;
  /** Whether the settings send traffic to host:port (any of HTTP, HTTPS, SOCKS, enabled). */
  pointsAt(s: FlatSettings, host: string, port: number): boolean;
  /** One line for people: "manual 127.0.0.1:1080", "auto (PAC http://…)", "none". */
  describe(s: FlatSettings): string;
}

/** Equal as far as the OS is concerned: the same keys with the same raw values. */
export function sameSettings(a: FlatSettings, b: FlatSettings): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if ((a[k] ?? null) !== (b[k] ?? null)) return false;
  return true;
}

/** The keys whose values differ, in `to`'s order. */
export function changedKeys(to: FlatSettings, from: FlatSettings): string[] {
  return Object.keys(to).filter((k) => (to[k] ?? null) !== (from[k] ?? null));
}

/** host:port with IPv6 in brackets (core/common's). */
export { hostPort };

/** The lines a user pastes into a shell where no backend exists. */
export function exportLines(target: Pick<ProxyTarget, 'host' | 'port' | 'bypass'>): string[] {
  const hp = hostPort(target.host, target.port);
  const noProxy = target.bypass.filter((b) => b !== '<local>').join(',');
  return [`export http_proxy=http://${hp} https_proxy=http://${hp} all_proxy=socks5h://${hp} no_proxy=${noProxy}`];
}
