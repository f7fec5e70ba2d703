import { httpGet, type Dialer, type HttpGetResult } from '../reach/index.js';

/**
 * One URL through each way out in order (directly or through the upstream proxy, then a working
 * tunnel), until `use` takes an answer: what rule sets, GEOSITE data and imported configs share. A
 * status other than 200, or `use` throwing (an HTML page where a list was expected), moves on to
 * the next way; every failure is kept, named by the way it took.
 */
export async function fetchVia<T>(
  dialers: ReadonlyArray<Dialer | null>,
  url: string,
  limits: { readonly timeoutMs: number; readonly maxBytes: number },
  use: (res: HttpGetResult, via: Dialer['via']) => T | Promise<T>,
  stopped: () => boolean = () => false,
): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
  const failures: string[] = [];
  for (const dialer of dialers) {
    if (!dialer || stopped()) continue;
    try {
      const res = await httpGet(url, { dialer, ...limits });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      return { ok: true, value: await use(res, dialer.via) };
    } catch (err) {
      failures.push(`${dialer.via}: ${(err as Error).message}`);
    }
  }
  return { ok: false, error: failures.join('; ') || 'no way to fetch it' };
}
