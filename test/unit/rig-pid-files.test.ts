/**
 * The rig's pid files (test/rig/pid-files.ts, test/rig/lib/common.sh): a signal reaches the process
 * the rig started and never another given the same PID since (pid_max is 32,768 here, and a CI run
 * goes round it: a rig's `down` once sent SIGKILL to every PID it had recorded, dead or not).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { liveRecordedPid, recordProcess, startTimeOf } from '../rig/pid-files.js';
import { eventually } from '../helpers/fds.js';

const COMMON = resolve(__dirname, '../rig/lib/common.sh');
const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'gh-pidfiles-'));

function sleeper(): ChildProcess {
  const c = spawn('sleep', ['30'], { stdio: 'ignore' });
  children.push(c);
  return c;
}
const alive = (c: ChildProcess): boolean => c.exitCode === null && c.signalCode === null;
const bash = (script: string): string =>
  execFileSync('bash', ['-c', `source ${COMMON}; set +e; ${script}`], { encoding: 'utf8' });

afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.runIf(process.platform === 'linux')("the rig's pid files", () => {
  it('name the live process they recorded, and nothing once it ended', async () => {
    const c = sleeper();
    const file = join(dir, 'a');
    recordProcess(file, c.pid);
    expect(liveRecordedPid(file)).toBe(c.pid);
    c.kill('SIGKILL');
    await eventually(() => !alive(c), 5_000, 'the process ended');
    await eventually(() => startTimeOf(c.pid!) === null, 5_000, 'reaped');
    expect(liveRecordedPid(file)).toBeNull();
  });

  it('do not name a process that has the PID but started at another time (a PID given again)', () => {
    const c = sleeper();
    const file = join(dir, 'b');
    writeFileSync(file, `${c.pid} 1\n`);
    expect(liveRecordedPid(file)).toBeNull();
  });

  it('are written by the shell side in the same format, and its kill spares a process that is not the one recorded', async () => {
    const c = sleeper();
    const file = join(dir, 'c');
    writeFileSync(file, bash(`proc_identity ${c.pid}`));
    expect(readFileSync(file, 'utf8').trim()).toBe(`${c.pid} ${startTimeOf(c.pid!)}`);
    expect(liveRecordedPid(file)).toBe(c.pid);
    writeFileSync(join(dir, 'other'), `${c.pid} 1\n`);
    bash(`kill_recorded ${join(dir, 'other')}`);
    expect(alive(c)).toBe(true);
    bash(`kill_recorded ${file}`);
    await eventually(() => !alive(c), 5_000, 'the recorded process killed');
  });
});
