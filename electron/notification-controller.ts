import type { ElectronApi } from './electron-api.js';

export type NotificationKind = 'switched' | 'lost' | 'sysproxy-changed' | 'tray-hint' | 'profile';

/**
 * At most one notification of a kind per this long: a flapping network must not spam the desktop.
 * A network profile's are counted per title ("Café is on", "Café is off"): leaving a network soon
 * after arriving is still said, a network that flaps says each at most once per interval.
 */
export const NOTIFY_MIN_INTERVAL_MS = 30_000;

/**
 * Native notifications, rate-limited per kind, each kind switchable off (in the window's
 * Settings and the tray; `isEnabled` reads the current choice at the moment of notifying).
 */
export class NotificationController {
  readonly #lastAt = new Map<string, number>();
  shown = 0;

  constructor(
    private readonly e: Pick<ElectronApi, 'Notification'>,
    private readonly isEnabled: (kind: NotificationKind) => boolean = () => true,
    private readonly now: () => number = Date.now,
  ) {}

  notify(kind: NotificationKind, title: string, body: string): boolean {
    if (!this.isEnabled(kind) || !this.e.Notification.isSupported()) return false;
    const key = kind === 'profile' ? `${kind}\0${title}` : kind;
    const last = this.#lastAt.get(key);
    if (last !== undefined && this.now() - last < NOTIFY_MIN_INTERVAL_MS) return false;
    this.#lastAt.set(key, this.now());
    new this.e.Notification({ title, body, silent: true }).show();
    this.shown++;
    return true;
  }
}
