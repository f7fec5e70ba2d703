import { readFileSync } from 'node:fs';

/**
 * A process's start time as the kernel counts it (Linux: field 22 of /proc/PID/stat, clock ticks
 * since boot); null where the platform does not tell. A pid plus its start time names one process,
 * so a pid the OS reused after a crash is not taken for Gatehop still running.
 */
export function processStart(pid: number): string | null {
  if (process.platform !== 'linux') return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may itself contain spaces or parentheses.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] ?? null; // fields 3.. start at index 0, so field 22 is index 19
  } catch {
    return null;
  }
}

/** Whether the process that wrote a snapshot is still running. */
export function processAlive(pid: number, start: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false; // ESRCH: gone
  }
  if (start === null) return true;
  const now = processStart(pid);
  return now === null || now === start;
}
