import { Writable } from 'node:stream';

export interface TappedLine {
  time: number;
  level: string;
  msg: string;
  event?: string;
  [field: string]: unknown;
}

/**
 * A logger stream that hands each JSON line to its subscribers (the admin API's event stream).
 * With nobody subscribed it costs one callback; subscribers must not block (they get parsed lines
 * and decide themselves what to keep).
 */
export class LogTap {
  readonly #subs = new Set<(line: TappedLine) => void>();
  /** The last lines, unparsed (parsed only when a window opens and asks for them). */
  readonly #recent: string[] = [];
  readonly stream = new Writable({
    write: (chunk: Buffer | string, _enc, done) => {
      const text = chunk.toString();
      this.#keep(text);
      if (this.#subs.size > 0) this.#deliver(text);
      done();
    },
  });

  constructor(private readonly backlog = 200) {}

  /** The last `backlog` lines, oldest first: what a window that opens now shows before new ones arrive. */
  recent(): TappedLine[] {
    return this.#recent.map(parseLine).filter((l): l is TappedLine => l !== null);
  }

  #keep(text: string): void {
    if (this.backlog <= 0) return;
    for (const raw of text.split('\n')) if (raw) this.#recent.push(raw);
    if (this.#recent.length > this.backlog) this.#recent.splice(0, this.#recent.length - this.backlog);
  }

  subscribe(fn: (line: TappedLine) => void): () => void {
    this.#subs.add(fn);
    return () => this.#subs.delete(fn);
  }

  #deliver(text: string): void {
    for (const raw of text.split('\n')) {
      const line = raw ? parseLine(raw) : null;
      if (!line) continue;
      for (const fn of [...this.#subs]) fn(line);
    }
  }
}

function parseLine(raw: string): TappedLine | null {
  try {
    const o = JSON.parse(raw) as Record<string, unknown>;
    const time = typeof o.time === 'string' ? Date.parse(o.time) : Number(o.time);
    return { ...o, time, level: String(o.level), msg: typeof o.msg === 'string' ? o.msg : '' };
  } catch {
    return null;
  }
}
