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
  readonly stream = new Writable({
    write: (chunk: Buffer | string, _enc, done) => {
      if (this.#subs.size > 0) this.#deliver(chunk.toString());
      done();
    },
  });

  subscribe(fn: (line: TappedLine) => void): () => void {
    this.#subs.add(fn);
    return () => this.#subs.delete(fn);
  }

  #deliver(text: string): void {
    for (const raw of text.split('\n')) {
      if (!raw) continue;
      let line: TappedLine;
      try {
        const o = JSON.parse(raw) as Record<string, unknown>;
        const time = typeof o.time === 'string' ? Date.parse(o.time) : Number(o.time);
        line = { ...o, time, level: String(o.level), msg: String(o.msg ?? '') };
      } catch {
        continue;
      }
      for (const fn of [...this.#subs]) fn(line);
    }
  }
}
