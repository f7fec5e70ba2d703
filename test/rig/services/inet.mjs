// The rig's "internet" host, run inside the inet namespace:
//   HTTP :80   /  (small page)   /big (BIG_BYTES of the seeded stream)   /bytes/N   /ip (caller)   /generate_204
//              /big?rate=B: the same bytes paced by the server at B bytes/s, so they are in flight
//              from the server for the whole download (a client-side limit lets buffers run ahead)
//              /health: 200, or the status HEALTH_FILE (JSON {callerAddress: status}) names for the caller,
//              so a test can make one node's probe fail (Rig.failHealth)
//   UDP  :7    echo
// Usage: node inet.mjs ADDRESS BIG_BYTES [HEALTH_FILE]
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { seededStream } from './stream.mjs';

const [address, bigBytes, healthFile] = [process.argv[2], Number(process.argv[3]), process.argv[4]];

function healthStatus(caller) {
  try {
    return JSON.parse(readFileSync(healthFile, 'utf8'))[caller] ?? 200;
  } catch {
    return 200; // no file: every caller is healthy
  }
}

function sendStream(res, total) {
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': total });
  const gen = seededStream(total);
  const pump = () => {
    for (let c = gen.next(); !c.done; c = gen.next()) if (!res.write(c.value)) return void res.once('drain', pump);
    res.end();
  };
  res.on('error', () => {});
  pump();
}

const PACE_SLICE = 16 * 1024;

/** The seeded stream at `rate` bytes/s: one slice per tick, each tick timed from the start. */
function sendPaced(res, total, rate) {
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': total });
  const slices = (function* () {
    for (const c of seededStream(total))
      for (let o = 0; o < c.length; o += PACE_SLICE) yield c.subarray(o, o + PACE_SLICE);
  })();
  const startedAt = Date.now();
  let sent = 0;
  let timer = null;
  const tick = () => {
    timer = null;
    const c = slices.next();
    if (c.done) return void res.end();
    res.write(c.value);
    sent += c.value.length;
    timer = setTimeout(tick, Math.max(0, startedAt + (sent / rate) * 1000 - Date.now()));
  };
  res.on('error', () => {});
  res.on('close', () => timer && clearTimeout(timer));
  tick();
}

const http = createServer((req, res) => {
  const [path, query = ''] = (req.url ?? '/').split('?');
  if (path === '/big') {
    const rate = Number(new URLSearchParams(query).get('rate'));
    return rate > 0 ? sendPaced(res, bigBytes, rate) : sendStream(res, bigBytes);
  }
  const m = /^\/bytes\/(\d{1,11})$/.exec(path);
  if (m) return sendStream(res, Math.min(Number(m[1]), 1 << 30));
  if (path === '/ip') return res.end(req.socket.remoteAddress?.replace(/^::ffff:/, ''));
  if (path === '/health') {
    res.writeHead(healthStatus(req.socket.remoteAddress?.replace(/^::ffff:/, '')));
    return res.end();
  }
  if (path === '/generate_204') {
    res.writeHead(204);
    return res.end();
  }
  res.setHeader('Content-Type', 'text/html');
  res.end('<!doctype html><title>files.test</title><p>Hello from the rig internet.</p>\n');
});
http.keepAliveTimeout = 60_000;
const udp = createSocket('udp4');
udp.on('message', (msg, rinfo) => udp.send(msg, rinfo.port, rinfo.address));
udp.bind(7, address, () => http.listen(80, address, () => process.stdout.write('ready\n')));
