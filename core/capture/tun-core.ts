import { ErrorCodes, GatehopError, type Logger } from '../common/index.js';
import type { CaptureServer } from './capture-server.js';
import { SUPERVISED_ENV, type CoreMessage, type SupervisorMessage } from './tun-messages.js';

/**
 * The core's side of TUN mode (#59): it runs as the user, started by the root supervisor
 * (tun-supervisor.ts) with TUN mode's group, and asks it over IPC for the device once its capture
 * socket listens. Nothing here needs a privilege.
 */

/** The IPC channel to the supervisor (the process's own, or a test's). */
export interface SupervisorChannel {
  /** Whether the supervisor is still there to ask. */
  connected(): boolean;
  send(m: CoreMessage): void;
  onMessage(cb: (m: SupervisorMessage) => void): void;
  /** Called once when the supervisor is gone (its end of the channel closed). */
  onGone(cb: () => void): void;
}

/** This process's channel when it is a core the TUN supervisor started, else null. */
export function supervisorChannel(): SupervisorChannel | null {
  if (process.env[SUPERVISED_ENV] !== '1' || typeof process.send !== 'function') return null;
  return {
    connected: () => process.connected,
    // A send the closed channel refuses is the supervisor gone, which onGone reports.
    send: (m) => void process.send!(m, undefined, undefined, () => undefined),
    onMessage: (cb) => process.on('message', (m) => cb(m as SupervisorMessage)),
    onGone: (cb) => process.once('disconnect', cb),
  };
}

/**
 * What a core started for TUN mode checks before it opens a socket: that it has a supervisor, is
 * not root, and runs with the group its sockets are marked by (the supervisor set them).
 */
export function checkSupervisedCore(channel: SupervisorChannel | null): SupervisorChannel {
  if (!channel)
    throw new GatehopError(
      ErrorCodes.CAPTURE_UNAVAILABLE,
      'TUN mode is started as root (sudo gatehop --tun), which runs the core as you; without it, use `gatehop run` for one program',
    );
  if (process.getuid?.() === 0)
    throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, 'TUN mode: the core must not run as root');
  return channel;
}

export interface TunMode {
  /** Asks the supervisor to stop the device and remove the routes, rules and nftables; resolves when done. */
  stop(): Promise<void>;
}

const ANSWER_MS = 20_000;

/** The device asked for (a capture ticket for TUN mode) and up, with its routes. */
export async function startTunMode(
  capture: CaptureServer,
  o: { name: string; strict: boolean },
  channel: SupervisorChannel,
  log: Logger,
): Promise<TunMode> {
  const waiters = new Set<(m: SupervisorMessage) => void>();
  let stopping = false;
  channel.onMessage((m) => {
    if (m.kind === 'tun-lost' && !stopping) {
      // The device and its routes are gone with the helper; strict mode's drop stays.
      log.error(
        { event: 'tun-mode-lost', device: o.name, code: m.code, stderr: m.stderr },
        o.strict ? 'TUN mode lost its device: traffic is blocked (strict mode)' : 'TUN mode lost its device',
      );
    }
    for (const w of [...waiters]) w(m);
  });
  const answer = (kinds: SupervisorMessage['kind'][], what: string): Promise<SupervisorMessage> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(take);
        reject(new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, `the TUN supervisor did not answer ${what} in 20 s`));
      }, ANSWER_MS);
      const take = (m: SupervisorMessage): void => {
        if (!kinds.includes(m.kind)) return;
        clearTimeout(timer);
        waiters.delete(take);
        resolve(m);
      };
      waiters.add(take);
    });
  const ticket = capture.ticket('TUN mode', { tun: true });
  const ready = answer(['tun-ready', 'tun-failed'], 'the request for the device');
  channel.send({
    kind: 'tun-up',
    socketPath: ticket.socketPath,
    tunAddress: ticket.tunAddress,
    mtu: ticket.mtu,
    key: ticket.key,
  });
  const m = await ready;
  if (m.kind === 'tun-failed') throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, m.message);
  log.info(
    { event: 'tun-mode-on', device: o.name, strict: o.strict, uid: process.getuid?.(), gid: process.getgid?.() },
    `TUN mode on: every program's traffic goes through Gatehop (${o.name}${o.strict ? ', strict' : ''})`,
  );
  return {
    stop: async () => {
      if (stopping) return;
      stopping = true;
      // No supervisor left to ask: the helper loses this process's socket as it ends, and the device goes.
      if (!channel.connected()) return;
      const done = answer(['tun-down-done'], 'the stop');
      channel.send({ kind: 'tun-down' });
      await done;
      log.info({ event: 'tun-mode-off', device: o.name }, 'TUN mode off: routes and rules removed');
    },
  };
}
