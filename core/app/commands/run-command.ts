import { spawn } from 'node:child_process';
import { basename } from 'node:path';
import { captureHelperPath } from '../../common/index.js';
import { captureTicketSchema } from '../../api/index.js';
import { callRunningCore, refusalOf } from '../admin-call.js';
import type { GatehopConfig } from '../config.js';

/** What `run` exits with when it could not start the program (as `env` and container tools do). */
const EXIT_SETUP = 125;

function fail(message: string, command = 'run'): never {
  process.stderr.write(`gatehop ${command}: ${message}\n`);
  process.exit(EXIT_SETUP);
}

/**
 * `gatehop run [--] <command> [args…]` (Linux, no privilege): the command and everything it starts
 * send all their traffic through the running Gatehop (docs/capture.md). The running core hands
 * out a one-time key to its capture socket; the helper makes the namespace and its TUN, relays it
 * to that socket, runs the command and exits with its status. With no Gatehop running, nothing
 * runs.
 */
export async function runCommand(command: string[], config: GatehopConfig): Promise<void> {
  if (process.platform !== 'linux') fail('capturing a program needs Linux; elsewhere use the system proxy');
  if (command.length === 0) fail('name the program to run: gatehop run -- curl https://example.com/');
  const helper = captureHelperPath();
  if (!helper)
    fail('the capture helper is not built (native/build/Release/gatehop-capture): run `npm run build:native`');
  const answer = await callRunningCore(config, 'POST', '/capture/sessions', {
    type: 'application/json',
    data: JSON.stringify({ command: basename(command[0]!).slice(0, 200) }),
  });
  if ('absent' in answer) fail(`${answer.absent}; start it first. Nothing was run.`);
  if (!answer.ok) fail(`Gatehop refused: ${refusalOf(answer)}. Nothing was run.`);
  const ticket = captureTicketSchema.parse(answer.body);
  const child = spawn(
    helper,
    [ticket.socketPath, ticket.gatewayAddress, ticket.tunAddress, String(ticket.mtu), '--', ...command],
    {
      stdio: 'inherit',
      env: { ...process.env, GATEHOP_CAPTURE_KEY: ticket.key },
    },
  );
  // The terminal's signals reach the program (same process group); this process only waits.
  for (const sig of ['SIGINT', 'SIGQUIT'] as const) process.on(sig, () => {});
  const forward = (sig: NodeJS.Signals): void => void child.kill(sig);
  process.on('SIGTERM', forward);
  process.on('SIGHUP', forward);
  const code = await new Promise<number>((resolve) => {
    child.once('error', (err) => {
      process.stderr.write(`gatehop run: cannot start the capture helper: ${err.message}\n`);
      resolve(EXIT_SETUP);
    });
    child.once('exit', (c, signal) => resolve(c ?? (signal ? 128 + signalNumber(signal) : EXIT_SETUP)));
  });
  process.exit(code);
}

function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGQUIT: 3,
    SIGKILL: 9,
    SIGTERM: 15,
  };
  return numbers[signal] ?? 1;
}

/**
 * `gatehop terminal`: the user's terminal, opened by the running Gatehop with their shell captured
 * (everything started in it goes through Gatehop): what the tray's "Open a terminal through
 * Gatehop" does, for a launcher or a keyboard shortcut.
 */
export async function terminalCommand(config: GatehopConfig): Promise<void> {
  if (process.platform !== 'linux') fail('a captured terminal needs Linux; elsewhere use the system proxy', 'terminal');
  const answer = await callRunningCore(config, 'POST', '/capture/run', {
    type: 'application/json',
    data: JSON.stringify({ command: '', terminal: true }),
  });
  if ('absent' in answer) fail(`${answer.absent}; start it first. No terminal was opened.`, 'terminal');
  if (!answer.ok) fail(`Gatehop refused: ${refusalOf(answer)}`, 'terminal');
}
