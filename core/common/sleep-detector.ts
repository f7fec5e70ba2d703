/**
 * For a periodic check of a peer's silence: tells when a tick comes far later than due, i.e. this
 * process did not run meanwhile (the machine suspended, the process stopped). Time asleep says
 * nothing about the peer, and what it sent meanwhile is still unread (timers run before sockets
 * are read), so a silence measured across a sleep must restart from the resume.
 */
export class SleepDetector {
  #lastTickAt: number;

  constructor(
    private readonly everyMs: number,
    /** Lateness beyond which the process is taken to have slept (a busy loop is late by far less). */
    private readonly gapMs = 2_000,
    now = Date.now(),
  ) {
    this.#lastTickAt = now;
  }

  /** Call once per tick; true when the process slept since the last one. */
  tick(now = Date.now()): boolean {
    const slept = now - this.#lastTickAt > this.everyMs + this.gapMs;
    this.#lastTickAt = now;
    return slept;
  }
}
