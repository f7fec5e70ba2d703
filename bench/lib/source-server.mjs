// A loopback HTTP server for benchmarks, in its own process so it does not share the measuring
// process's event loop: GET /bytes/N streams N bytes; any connection to the second port gets one
// byte at once (for time-to-first-byte). argv[2]: the address to listen on (127.0.0.1 by default).
import { createServer as createHttp } from 'node:http';
import { createServer as createTcp } from 'node:net';

const chunk = Buffer.alloc(256 * 1024, 0x5a);
const http = createHttp((req, res) => {
  const n = Number((req.url ?? '').split('/')[2] ?? 0);
  res.writeHead(200, { 'Content-Length': n, 'Content-Type': 'application/octet-stream' });
  let left = n;
  const pump = () => {
    while (left > 0) {
      const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= part.length;
      if (!res.write(part)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
});
const ttfb = createTcp((s) => {
  s.on('error', () => {});
  s.write('!');
  s.on('end', () => s.end());
});
const host = process.argv[2] ?? '127.0.0.1';
http.listen(0, host, () => {
  ttfb.listen(0, host, () => {
    process.stdout.write(JSON.stringify({ http: http.address().port, ttfb: ttfb.address().port }) + '\n');
  });
});
process.on('SIGTERM', () => process.exit(0));
