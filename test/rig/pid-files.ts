/**
 * The rig's record of the processes it started (DIR/pids/NAME: "PID STARTTIME"), so that a later
 * signal reaches that process and never another that was given the same PID since. This machine's
 * pid_max is 32,768 and a CI run starts tens of thousands of processes (every `ip netns exec`,
 * iptables and curl), so the PID of a process that ended (a node a test killed, an impairment
 * cleared) comes round again within minutes, perhaps as another test's server. test/rig/lib/
 * common.sh writes and checks the same format for up and down.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** When the process started (clock ticks since boot, /proc/PID/stat field 22), or null when none runs. */
export function startTimeOf(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Field 2 (the command name) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

/** Records a process just started (its PID and start time). */
export function recordProcess(file: string, pid: number | undefined): void {
  if (pid === undefined) throw new Error(`no process to record in ${file}`);
  writeFileSync(file, `${pid} ${startTimeOf(pid) ?? 'gone'}\n`);
}

/** The recorded process's PID while that same process runs; null when it ended (or none was recorded). */
export function liveRecordedPid(file: string): number | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const [pid, start] = text.trim().split(' ');
  const n = Number(pid);
  return Number.isInteger(n) && n > 0 && start !== undefined && startTimeOf(n) === start ? n : null;
}
