import type { AdminCore } from './admin-core.js';

/** What the Clash streams send, whichever transport (HTTP lines or WebSocket messages) carries them. */

const CLASH_LEVELS = ['debug', 'info', 'warning', 'error'] as const;
type ClashLevel = (typeof CLASH_LEVELS)[number];

/** Clash's names for pino's levels. */
function clashLevel(pinoLevel: string): ClashLevel {
  if (pinoLevel === 'warn') return 'warning';
  if (pinoLevel === 'error' || pinoLevel === 'fatal') return 'error';
  if (pinoLevel === 'info') return 'info';
  return 'debug';
}

/**
 * Bytes moved since the previous call (the first call: since the meter was made), with the totals
 * mihomo adds: Clash's /traffic shape. Down is what clients have taken (see core/proxy's
 * delivered counting), so a client that reads slowly shows its own rate.
 */
export function trafficMeter(core: AdminCore): () => { up: number; down: number; upTotal: number; downTotal: number } {
  let up = core.proxy.stats.bytesUp;
  let down = core.proxy.stats.bytesDown;
  return () => {
    const s = core.proxy.stats;
    const nowUp = s.bytesUp;
    const nowDown = s.bytesDown;
    const sample = {
      up: Math.max(0, nowUp - up),
      down: Math.max(0, nowDown - down),
      upTotal: nowUp,
      downTotal: nowDown,
    };
    up = nowUp;
    down = nowDown;
    return sample;
  };
}

/**
 * Log lines at or above `levelParam` (a `?level=` value; Clash's default, info, when absent or
 * unknown) as Clash's `{type, payload}`. Returns the unsubscribe function.
 */
export function subscribeClashLogs(
  core: AdminCore,
  levelParam: string | null,
  onLine: (line: { type: ClashLevel; payload: string }) => void,
): () => void {
  const wanted = CLASH_LEVELS.indexOf((levelParam ?? 'info') as ClashLevel);
  const min = wanted < 0 ? 1 : wanted;
  const off = core.logTap?.subscribe((l) => {
    const type = clashLevel(l.level);
    if (CLASH_LEVELS.indexOf(type) >= min) onLine({ type, payload: l.msg });
  });
  return off ?? (() => {});
}
