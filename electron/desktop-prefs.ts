import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { NotificationKind } from './notification-controller.js';

/** The shell's own preferences (what the core's settings do not cover), in <userData>/desktop.json. */
export interface DesktopPrefs {
  notifications: Record<Exclude<NotificationKind, 'tray-hint'>, boolean>;
}

const DEFAULTS: DesktopPrefs = { notifications: { switched: true, lost: true, 'sysproxy-changed': true } };

export function loadPrefs(file: string): DesktopPrefs {
  try {
    const p = JSON.parse(readFileSync(file, 'utf8')) as Partial<DesktopPrefs>;
    const n = p.notifications ?? {};
    return { notifications: { ...DEFAULTS.notifications, ...Object.fromEntries(Object.entries(n).filter(([k, v]) => k in DEFAULTS.notifications && typeof v === 'boolean')) } };
  } catch {
    return structuredClone(DEFAULTS);
  }
}

export function savePrefs(file: string, prefs: DesktopPrefs): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(prefs, null, 1));
  renameSync(`${file}.tmp`, file);
}
