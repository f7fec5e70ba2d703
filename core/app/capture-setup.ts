import { CaptureServer } from '../capture/index.js';
import { captureHelperPath, ErrorCodes, GatehopError, runSocketPath, type Logger } from '../common/index.js';
import type { AdminCore } from '../api/index.js';
import { launchCaptured } from './capture-launch.js';
import type { ProxyServer } from '../proxy/index.js';

/**
 * Where this core's capture socket is: in the data dir (one per core, so cores side by side never
 * meet), else, for a data dir too deep for a socket's path, in the user's runtime dir under a name
 * made from the data dir.
 */
export function captureSocketPath(dataDir: string): string {
  return runSocketPath(dataDir, 'capture.sock');
}

/**
 * `gatehop run`'s end in this core (Linux only): listening, or null with the reason logged. A core
 * that cannot capture still proxies; `gatehop run` then says capture is not available.
 */
export async function startCapture(dataDir: string, proxy: ProxyServer, logger: Logger): Promise<CaptureServer | null> {
  if (process.platform !== 'linux') return null;
  const server = new CaptureServer({
    path: captureSocketPath(dataDir),
    inbound: proxy,
    log: logger.child({ component: 'capture' }),
  });
  try {
    await server.listen();
    return server;
  } catch (err) {
    logger.warn(
      { event: 'capture-unavailable', err: (err as Error).message },
      '`gatehop run` is not available: the capture socket could not listen',
    );
    return null;
  }
}

const WHY = {
  platform: 'capturing a program needs Linux',
  helper: 'the capture helper is not built (npm run build:native)',
  socket: 'the capture socket could not listen (see the log)',
} as const;

/** Why `gatehop run` cannot work with this core (`helper`: whether the helper was found), or null when it can. */
function unavailable(server: CaptureServer | null, helper: boolean): keyof typeof WHY | null {
  if (process.platform !== 'linux') return 'platform';
  if (!helper) return 'helper';
  if (!server) return 'socket';
  return null;
}

/** The admin API's view of capture: availability, tickets for `gatehop run`, launches from the window. */
export function captureAccess(server: () => CaptureServer | null): NonNullable<AdminCore['capture']> {
  // Looked for once: /status asks every second, and the helper does not come and go while we run.
  const helper = captureHelperPath() !== null;
  const live = (): CaptureServer => {
    const s = server();
    const why = unavailable(s, helper);
    if (why || !s) throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, WHY[why ?? 'socket']);
    return s;
  };
  return {
    available: () => {
      const why = unavailable(server(), helper);
      return { available: why === null, reason: why };
    },
    ticket: (command) => live().ticket(command),
    launch: (line, terminal) => launchCaptured((label) => live().ticket(label), line, { terminal }),
    sessions: () => server()?.sessions ?? [],
  };
}
