const KEY = 'gatehop.token';

/**
 * The dashboard's token arrives in the address's fragment (#token=…, printed by the CLI); it is
 * kept in sessionStorage for this tab and removed from the address bar, so it is neither
 * bookmarked nor shown. Returns null when there is none: the page explains where to find it.
 */
export function takeToken(loc: Location, storage: Storage, history: History): string | null {
  const m = /(?:^#|&)token=([^&]+)/.exec(loc.hash);
  if (m) {
    const token = decodeURIComponent(m[1]!);
    storage.setItem(KEY, token);
    history.replaceState(null, '', `${loc.pathname}${loc.search}`);
    return token;
  }
  return storage.getItem(KEY);
}

export function forgetToken(storage: Storage): void {
  storage.removeItem(KEY);
}

/** Keeps a token the dashboard's password login returned, as one from a link is kept. */
export function keepToken(storage: Storage, token: string): void {
  storage.setItem(KEY, token);
}
