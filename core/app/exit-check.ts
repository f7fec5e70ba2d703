import { isIP } from 'node:net';
import { Listeners, type Logger } from '../common/index.js';
import type { ExitCheckAccess, ExitInfoDto } from '../api/index.js';
import { httpGet, type Dialer } from '../reach/index.js';

export interface ExitCheckDeps {
  /** The address-echo URL (config exitCheck.url), read per check. */
  url: () => string | null;
  /** A way out through the active tunnel, or null while none is up. */
  dialer: () => Dialer | null;
  activeNodeId: () => string | null;
  intervalMs: number;
  logger: Logger;
}

/** The address (and country) an echo service saw: JSON (ip/query/origin, country_code/countryCode/country) or plain text. */
export function parseExit(body: string): { address: string | null; country: string | null } {
  const text = body.trim();
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    if (j && typeof j === 'object') {
      const address = [j.ip, j.query, j.address, j.origin, j.ip_addr].find(
        (v): v is string => typeof v === 'string' && isIP(v.split(',')[0]!.trim()) !== 0,
      );
      const country = [j.country_code, j.countryCode, j.country_iso, j.country].find(
        (v): v is string => typeof v === 'string' && /^[A-Za-z]{2}$/.test(v),
      );
      return {
        address: address ? address.split(',')[0]!.trim() : null,
        country: country ? country.toUpperCase() : null,
      };
    }
  } catch {
    /* not JSON: plain text */
  }
  const m = /(\d{1,3}(?:\.\d{1,3}){3})|([0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7})/.exec(text);
  const address = m && isIP(m[0]) ? m[0] : null;
  return { address, country: null };
}

/**
 * Where am I: the exit address seen through the active tunnel, from an address-echo URL
 * (config exitCheck.url; off without one). Measured when a tunnel becomes active, every
 * `intervalMs`, and when asked; one check at a time. VPN Gate has relay nodes whose exit is not
 * the listed address or country: the window flags the difference.
 */
export class ExitCheck implements ExitCheckAccess {
  #last: ExitInfoDto | null = null;
  #running: Promise<ExitInfoDto> | null = null;
  #timer: NodeJS.Timeout | null = null;
  readonly #listeners: Listeners<ExitInfoDto>;
  readonly #log: Logger;

  constructor(private readonly deps: ExitCheckDeps) {
    this.#log = deps.logger.child({ component: 'exit-check' });
    this.#listeners = new Listeners(this.#log, 'exit check');
  }

  get last(): ExitInfoDto | null {
    return this.#last;
  }

  onChange(fn: (e: ExitInfoDto) => void): () => void {
    return this.#listeners.add(fn);
  }

  start(): void {
    // Read per tick: a reload that sets or clears exitCheck.url applies at the next one.
    this.#timer ??= setInterval(
      () => void (this.deps.url() ? this.check().catch(() => undefined) : undefined),
      this.deps.intervalMs,
    );
    this.#timer.unref();
  }

  check(): Promise<ExitInfoDto> {
    this.#running ??= this.#measure().finally(() => (this.#running = null));
    return this.#running;
  }

  async #measure(): Promise<ExitInfoDto> {
    const url = this.deps.url();
    const nodeId = this.deps.activeNodeId();
    const dialer = this.deps.dialer();
    let info: ExitInfoDto;
    if (!url) info = { nodeId, address: null, country: null, at: Date.now(), error: 'exitCheck.url is not set' };
    else if (!dialer) info = { nodeId, address: null, country: null, at: Date.now(), error: 'no tunnel is up' };
    else {
      try {
        const r = await httpGet(url, { dialer, timeoutMs: 10_000, maxBytes: 16 * 1024 });
        const parsed = r.status >= 200 && r.status < 300 ? parseExit(r.body) : { address: null, country: null };
        info = {
          nodeId,
          ...parsed,
          at: Date.now(),
          error: parsed.address
            ? null
            : r.status >= 300 || r.status < 200
              ? `${url} answered ${r.status}`
              : `${url} answered no address`,
        };
      } catch (err) {
        info = { nodeId, address: null, country: null, at: Date.now(), error: (err as Error).message };
      }
    }
    this.#last = info;
    if (info.address)
      this.#log.info(
        { event: 'exit-checked', nodeId, address: info.address, country: info.country },
        `traffic leaves through ${nodeId ?? '?'} from ${info.address}${info.country ? ` (${info.country})` : ''}`,
      );
    else
      this.#log.info(
        { event: 'exit-check-failed', nodeId, err: info.error },
        `could not see where traffic leaves: ${info.error}`,
      );
    this.#listeners.emit(info);
    return info;
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
