import { readFileSync, statSync } from 'node:fs';
import { Credentials } from '../proxy/index.js';

/** The dashboard password's file in the data dir (`gatehop dashboard-password` writes it). */
export const DASHBOARD_PASSWORD_FILE = 'dashboard-password';
/** The one user name its line has. */
export const DASHBOARD_USER = 'dashboard';

/**
 * The dashboard's password login (#63): on a LAN address a browser asks for a password instead of
 * needing the token in the link. The password is an scrypt line in `<data-dir>/dashboard-password`,
 * read again when the file changes (no restart); a wrong one waits before its next try, as the
 * proxy's do (Credentials' back-off per address). A right one is answered with the API token, which
 * the page keeps for its tab as it keeps one from a link.
 */
export class DashboardLogin {
  #creds: Credentials | null = null;
  #stamp = '';

  constructor(private readonly path: string) {}

  /** Whether a password is set (the page offers the form only then). */
  get available(): boolean {
    return this.#current() !== null;
  }

  async verify(password: string, address: string, gone: () => boolean): Promise<boolean> {
    const creds = this.#current();
    return creds !== null && (await creds.verify(DASHBOARD_USER, password, address, gone));
  }

  #current(): Credentials | null {
    let stamp: string;
    try {
      const st = statSync(this.path);
      stamp = `${st.mtimeMs}:${st.size}`;
    } catch {
      this.#creds = null;
      this.#stamp = '';
      return null;
    }
    if (stamp !== this.#stamp) {
      this.#stamp = stamp;
      try {
        this.#creds = Credentials.parse(readFileSync(this.path, 'utf8'), this.path);
      } catch {
        this.#creds = null; // a damaged file offers no login; `gatehop dashboard-password` writes it again
      }
    }
    return this.#creds;
  }
}
