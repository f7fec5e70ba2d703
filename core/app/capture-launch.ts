import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { captureHelperPath, ErrorCodes, GatehopError } from '../common/index.js';
import type { CaptureTicket } from '../capture/index.js';

/**
 * "Run a program through Gatehop…" from the window or the tray: the core starts the capture helper
 * itself (it holds the ticket; no admin token travels). A command line is split as a shell would
 * split words (quotes and backslashes; nothing is expanded or run by a shell), or a `.desktop`
 * entry's Exec line is used. With `terminal`, the user's terminal opens with the command (their
 * shell when none is given) inside it, so everything started there is captured. The program's
 * output goes nowhere (it is a desktop program); in a terminal it is the terminal's.
 */
export function launchCaptured(
  ticketFor: (label: string) => CaptureTicket,
  line: string,
  o: { terminal: boolean },
): { pid: number; command: string[] } {
  const helper = captureHelperPath();
  if (!helper)
    throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, 'the capture helper is not built (npm run build:native)');
  let command = line.trim().endsWith('.desktop') ? desktopExec(line.trim()) : splitWords(line);
  if (command.length === 0) {
    if (!o.terminal) throw new GatehopError(ErrorCodes.CONFIG_INVALID, 'name a program to run');
    command = [process.env.SHELL || '/bin/sh'];
  }
  const ticket = ticketFor(basename(command[0]!));
  const captured = [
    helper,
    ticket.socketPath,
    ticket.gatewayAddress,
    ticket.tunAddress,
    String(ticket.mtu),
    '--',
    ...command,
  ];
  const argv = o.terminal ? inTerminal(captured) : captured;
  const child = spawn(argv[0]!, argv.slice(1), {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, GATEHOP_CAPTURE_KEY: ticket.key },
  });
  // The program is the user's, not the core's: it outlives the window and the core (offline then).
  child.on('error', () => {});
  child.unref();
  if (child.pid === undefined) throw new GatehopError(ErrorCodes.CAPTURE_UNAVAILABLE, `cannot start ${argv[0]}`);
  return { pid: child.pid, command };
}

/** Words of a command line: whitespace splits, '…' and "…" group, a backslash escapes; nothing expands. */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word = (word ?? '') + line[++i]!;
      else word = (word ?? '') + c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < line.length) word = (word ?? '') + line[++i]!;
    else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else word = (word ?? '') + c;
  }
  if (quote) throw new GatehopError(ErrorCodes.CONFIG_INVALID, `unclosed ${quote} in the command`);
  if (word !== null) words.push(word);
  return words;
}

/** A `.desktop` entry's program: its Exec line, field codes (%f, %U…) dropped. */
export function desktopExec(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new GatehopError(ErrorCodes.CONFIG_INVALID, `cannot read ${path}: ${(err as Error).message}`);
  }
  const exec = /^Exec=(.*)$/m.exec(text.slice(text.indexOf('[Desktop Entry]')))?.[1];
  if (!exec) throw new GatehopError(ErrorCodes.CONFIG_INVALID, `${basename(path)} has no Exec line`);
  return splitWords(exec)
    .filter((w) => !/^%[fFuUdDnNickvm]$/.test(w))
    .map((w) => w.replace(/%%/g, '%'));
}

/** Terminals by how they take a command: `--` (GNOME's), `-e` (most), or the command alone. */
const TERMINALS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['x-terminal-emulator', ['-e']],
  ['gnome-terminal', ['--']],
  ['konsole', ['-e']],
  ['xfce4-terminal', ['-x']],
  ['kitty', []],
  ['alacritty', ['-e']],
  ['xterm', ['-e']],
];

function onPath(name: string): boolean {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, name);
    try {
      if (existsSync(p)) {
        accessSync(p, constants.X_OK);
        return true;
      }
    } catch {
      // not executable here: look further
    }
  }
  return false;
}

/** `argv` inside the user's terminal ($TERMINAL first, taking `-e`), or a clear error when none is found. */
function inTerminal(argv: string[]): string[] {
  const own = process.env.TERMINAL;
  if (own && onPath(own)) return [own, '-e', ...argv];
  const found = TERMINALS.find(([name]) => onPath(name));
  if (!found)
    throw new GatehopError(
      ErrorCodes.CAPTURE_UNAVAILABLE,
      `no terminal found (tried ${TERMINALS.map(([n]) => n).join(', ')}; set TERMINAL to yours)`,
    );
  return [found[0], ...found[1], ...argv];
}
