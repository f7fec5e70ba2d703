import { execFileSync, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { captureHelperPath, ErrorCodes, GatehopError } from '../common/index.js';
import { parseCoreMessage, SUPERVISED_ENV, type SupervisorMessage } from './tun-messages.js';
import { raiseTun, tunOff, type RaisedTun, type TunModeOptions } from './tun-mode.js';

/**
 * TUN mode's root part (#59): `sudo gatehop --tun` is this small supervisor. It parses no list,
 * rule set, node reply or config file and opens no network socket: it starts the core as the user
 * who asked (SUDO_UID, PKEXEC_UID or --tun-user) with TUN mode's group, makes the device (the
 * helper, which becomes that user before it touches the core's socket), nftables, the routes and
 * the rules when the core asks, and removes them when the core stops, asks, or dies. Signals to
 * the supervisor go on to the core (it is in a process group of its own, so a terminal's Ctrl-C
 * reaches it once). When the supervisor dies, the core sees its channel close and stops; the
 * helper then loses the core's socket and the device goes with it.
 */

export interface TunUser {
  uid: number;
  name: string;
  home: string;
}

function passwdEntry(key: string): TunUser | null {
  try {
    const [name, , uid, , , home] = execFileSync('getent', ['passwd', key], { encoding: 'utf8' }).trim().split(':');
    return name && uid && home !== undefined ? { uid: Number(uid), name, home } : null;
  } catch {
    return null;
  }
}

/**
 * The user the core runs as: `given` (a name or a uid), else the one sudo or pkexec ran for.
 * Never root: a core as root is what this replaces.
 */
export function tunUser(given: string | undefined, env: NodeJS.ProcessEnv = process.env): TunUser {
  const from = given ?? env.SUDO_UID ?? env.PKEXEC_UID;
  if (from === undefined || from === '')
    throw new GatehopError(
      ErrorCodes.CONFIG_INVALID,
      'TUN mode runs the core as a user, not as root: start it with sudo from your account, or name the user with --tun-user (e.g. a system user made for Gatehop)',
    );
  const user = passwdEntry(from);
  if (!user) throw new GatehopError(ErrorCodes.CONFIG_INVALID, `--tun-user: no user ${from}`);
  if (user.uid === 0)
    throw new GatehopError(
      ErrorCodes.CONFIG_INVALID,
      'TUN mode does not run the core as root: start it with sudo from your own account, or name another user with --tun-user',
    );
  return user;
}

/** The environment the core starts with: the user's HOME and names (the data dir is theirs), the channel's flag. */
export function coreEnvironment(user: TunUser, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {
    ...env,
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
    [SUPERVISED_ENV]: '1',
  };
  // sudo drops XDG_RUNTIME_DIR; the user's own one is theirs to use, root's never.
  delete out.XDG_RUNTIME_DIR;
  const runtime = `/run/user/${user.uid}`;
  try {
    if (statSync(runtime).uid === user.uid) out.XDG_RUNTIME_DIR = runtime;
  } catch {
    // no session of theirs: the data dir holds the sockets
  }
  return out;
}

function say(line: string): void {
  process.stderr.write(`gatehop (TUN mode): ${line}\n`);
}

/** Runs the core under TUN mode until it exits; resolves with the exit code to leave with. */
export async function superviseTunCore(o: TunModeOptions, user: TunUser): Promise<number> {
  if (process.platform !== 'linux') throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, 'TUN mode needs Linux');
  if (process.getuid?.() !== 0)
    throw new GatehopError(
      ErrorCodes.CAPTURE_UNAVAILABLE,
      'TUN mode needs root (sudo gatehop --tun); without it, use `gatehop run` for one program',
    );
  if (!captureHelperPath()) throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, 'the capture helper is not built');
  tunOff(o.name); // what a run that was killed left

  const core = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    uid: user.uid,
    gid: o.gid, // libuv drops the supplementary groups with it: the core has this one alone
    env: coreEnvironment(user),
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  let raised: RaisedTun | null = null;
  let raising = false;
  let stopAsked = false;
  const tell = (m: SupervisorMessage): void => {
    if (core.connected) core.send(m);
  };

  core.on('message', (raw: unknown) => {
    const m = parseCoreMessage(raw);
    if (!m) {
      say('ignored a message from the core that is not one of TUN mode’s');
      return;
    }
    if (m.kind === 'tun-up') {
      if (raising || raised) return tell({ kind: 'tun-failed', message: 'TUN mode is already on' });
      raising = true;
      raiseTun(m, o, { uid: user.uid, gid: o.gid }).then(
        (r) => {
          raised = r;
          r.onLost((code, stderr) => tell({ kind: 'tun-lost', code, stderr }));
          tell({ kind: 'tun-ready' });
        },
        (err: Error) => tell({ kind: 'tun-failed', message: err.message }),
      );
      return;
    }
    // tun-down: the core is stopping; the host's traffic goes back on its own routes first.
    const lowering = raised ? raised.lower() : Promise.resolve(void tunOff(o.name));
    raised = null;
    lowering.then(
      () => tell({ kind: 'tun-down-done' }),
      (err: Error) => {
        say(`could not remove TUN mode's routes: ${err.message}; run sudo gatehop tun off`);
        tell({ kind: 'tun-down-done' });
      },
    );
  });

  const forward = (signal: NodeJS.Signals): void => {
    if (signal !== 'SIGHUP') stopAsked = true;
    core.kill(signal);
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, forward);

  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    core.once('exit', (c, s) => resolve([c, s])),
  );
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(s, forward);
  // The user stopped Gatehop (or the core stopped cleanly): everything goes. The core died
  // unasked: strict mode's drop stays, as it would after a crash of the whole process.
  const keepBlock = o.strict && !stopAsked && code !== 0;
  // lower() ends with tunOff; with nothing raised (a start that failed, or tun-down came first) tunOff alone.
  if (raised) await (raised as RaisedTun).lower({ keepBlock });
  else tunOff(o.name, { keepBlock });
  if (keepBlock)
    say(
      `the core exited (${signal ?? code}); strict mode keeps this machine's traffic blocked until \`sudo gatehop tun off\` or the next start`,
    );
  return code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1);
}
