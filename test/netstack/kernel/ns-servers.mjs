// Kernel-side TCP services for netstack tests, run inside the test namespace.
//   5001 source: the client sends "<bytes>\n"; the server sends that many bytes of pattern(seed 7), then FIN
//   5002 sink:   reads until the client's FIN, then answers with the SHA-256 hex of what it got, then FIN
//   5003 reset:  resets the connection as soon as the first bytes arrive
//   5004 early-fin: sends "bye" and FIN at once, keeps reading; after the client's FIN answers nothing
//                   but records the byte count, printed on stdout as "early-fin <n>"
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { pattern } from './pattern.mjs';

const host = process.argv[2];
/** Calls `then(count)` once the client's first line ("<bytes>\n") has arrived. */
function onCountLine(s, then) {
  let line = '';
  s.on('data', (c) => {
    if (line === null) return;
    line += c.toString('latin1');
    const nl = line.indexOf('\n');
    if (nl < 0) return;
    const count = Number(line.slice(0, nl));
    line = null;
    then(count);
  });
}

const listen = (port, handler) =>
  new Promise((r) =>
    createServer({ allowHalfOpen: true }, (s) => {
      s.on('error', () => {});
      handler(s);
    }).listen(port, host, r),
  );

await listen(5001, (s) => {
  onCountLine(s, (total) => {
    const gen = pattern(7, total);
    const pump = () => {
      for (let chunk = gen.next(); !chunk.done; chunk = gen.next()) {
        if (!s.write(chunk.value)) return void s.once('drain', pump);
      }
      s.end();
    };
    pump();
  });
});
// 5005 fast source, for benchmarks: like 5001 with constant bytes, so the source costs nothing.
const fill = Buffer.alloc(256 * 1024, 0x5a);
await listen(5005, (s) => {
  onCountLine(s, (count) => {
    let left = count;
    const pump = () => {
      while (left > 0) {
        const part = left >= fill.length ? fill : fill.subarray(0, left);
        left -= part.length;
        if (!s.write(part)) return void s.once('drain', pump);
      }
      s.end();
    };
    pump();
  });
});
await listen(5002, (s) => {
  const h = createHash('sha256');
  s.on('data', (c) => h.update(c));
  s.on('end', () => s.end(h.digest('hex')));
});
await listen(5003, (s) => s.once('data', () => s.resetAndDestroy()));
await listen(5004, (s) => {
  let n = 0;
  s.end('bye');
  s.on('data', (c) => (n += c.length));
  s.on('end', () => process.stdout.write(`early-fin ${n}\n`));
});
process.stdout.write('ready\n');
