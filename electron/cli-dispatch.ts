/**
 * The packaged app is one binary named `gatehop` (Linux's deb puts it on the PATH), so
 * `gatehop sysproxy restore` after a `.deb` install reaches this main process, not Node. A launch
 * whose first argument is one of the CLI's subcommands, or asks for its help or version, is the
 * CLI's: it runs here, in the main process's Node, before any window, tray or single-instance lock
 * (a second tray app must not start, and the running one must not be focused, for a terminal
 * command). Everything else is the desktop app. Electron's fuses forbid running it as plain Node
 * (ELECTRON_RUN_AS_NODE), so this is the packaged app's only way to the CLI.
 */
const HELP_OR_VERSION = new Set(['--help', '-h', '--version', '-V', 'help']);

/**
 * The arguments for the CLI (without the program's path), or null for the desktop app.
 * `defaultApp`: Electron started as `electron <app dir> …` (npm start), where argv[1] is the app.
 * Chromium's own switches (`--js-flags=…`, `--no-sandbox`) before the subcommand are skipped.
 */
export function cliArguments(
  argv: readonly string[],
  defaultApp: boolean,
  subcommands: readonly string[],
): string[] | null {
  const args = argv.slice(defaultApp ? 2 : 1);
  const first = args.findIndex((a) => !/^--(js-flags|no-sandbox|enable-logging|ozone-platform)/.test(a));
  if (first < 0) return null;
  const word = args[first]!;
  if (subcommands.includes(word) || HELP_OR_VERSION.has(word)) return args.slice(first);
  return null;
}
