/**
 * The packaged `gatehop` is the Electron binary (#62): its subcommands must reach the CLI, and a
 * plain launch (the desktop entry, autostart, a second launch) must reach the tray app.
 */
import { describe, expect, it } from 'vitest';
import { buildCli } from '../../core/app/index.js';
import { cliArguments } from '../../electron/cli-dispatch.js';

const SUBCOMMANDS = buildCli().commands.map((c) => c.name());
const EXE = '/opt/Gatehop/gatehop';

describe('which launches of the packaged binary are the CLI', () => {
  it('knows every subcommand the README shows', () => {
    expect(SUBCOMMANDS).toEqual(
      expect.arrayContaining(['passwd', 'check', 'run', 'terminal', 'tun', 'import-list', 'import-rules', 'sysproxy']),
    );
  });

  it('hands a subcommand and everything after it to the CLI, in the packaged app and under npm start', () => {
    expect(cliArguments([EXE, 'sysproxy', 'restore'], false, SUBCOMMANDS)).toEqual(['sysproxy', 'restore']);
    expect(
      cliArguments([EXE, '--js-flags=--max-semi-space-size=8', 'check', '--config', 'g.yaml'], false, SUBCOMMANDS),
    ).toEqual(['check', '--config', 'g.yaml']);
    expect(cliArguments(['/x/electron', '/src/gatehop', 'run', '--', 'curl', 'x'], true, SUBCOMMANDS)).toEqual([
      'run',
      '--',
      'curl',
      'x',
    ]);
    expect(cliArguments([EXE, '--help'], false, SUBCOMMANDS)).toEqual(['--help']);
    expect(cliArguments([EXE, '--version'], false, SUBCOMMANDS)).toEqual(['--version']);
  });

  it('leaves the desktop app its own launches: none, Chromium switches, a file or anything else', () => {
    expect(cliArguments([EXE], false, SUBCOMMANDS)).toBeNull();
    expect(cliArguments([EXE, '--js-flags=--max-semi-space-size=8'], false, SUBCOMMANDS)).toBeNull();
    expect(cliArguments(['/x/electron', '/src/gatehop'], true, SUBCOMMANDS)).toBeNull();
    expect(cliArguments([EXE, '--hidden'], false, SUBCOMMANDS)).toBeNull();
    expect(cliArguments([EXE, 'gatehop://open'], false, SUBCOMMANDS)).toBeNull();
  });
});
