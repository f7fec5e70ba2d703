// The rig's "internet" host, run inside the inet namespace:
//   HTTP :80   /  (small page)   /big (BIG_BYTES of the seeded stream)   /bytes/N   /ip (caller)   /generate_204
//              /big?rate=B: the same bytes paced by the server at B bytes/s, so they are in flight
//              from the server for the whole download (a client-side limit lets buffers run ahead)
//              /health: 200, or the status HEALTH_FILE (JSON {callerAddress: status}) names for the caller,
//              so a test can make one node's probe fail (Rig.failHealth)
//              /honesty.txt: a fixed body (the honesty checks' plain-HTTP target, #43)
//              /honesty.html: a fixed page, gzip when asked (the page the checks fetch as a browser, #59)
//   HTTP :18080 the same (a dishonest node's injector fetches from here, past its own redirect of :80)
//   HTTPS :443 (with TLS_CERT/TLS_KEY: tls.rig.test and doh.rig.test from the rig's "public" root)
//              the same pages, and /dns-query: DNS over HTTPS (RFC 8484) answering as the rig's
//              dnsmasq does: files.test and *.rig.test are this host, anything else does not exist
//   UDP  :7    echo
//   UDP  :5353 the authority for echo.test (the rig's dnsmasq forwards it here): every name there is
//              this host, and the resolver that asked for it is remembered, as a real resolver
//              echo (ip-api's EDNS echo) does; HTTP /resolver on NONCE.echo.test then answers
//              {"dns":{"ip":RESOLVER}} (404 for a name nobody asked), for the leak test (#64)
// Usage: node inet.mjs ADDRESS BIG_BYTES [HEALTH_FILE] [TLS_CERT TLS_KEY]
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import dnsPacket from 'dns-packet';
import { gzipSync } from 'node:zlib';
import { HONESTY_BODY, HONESTY_PAGE } from './fixed.mjs';
import { seededStream } from './stream.mjs';

const [address, bigBytes, healthFile, tlsCert, tlsKey] = [
  process.argv[2],
  Number(process.argv[3]),
  process.argv[4],
  process.argv[5],
  process.argv[6],
];

/** DNS over HTTPS, as the rig's dnsmasq answers. */
function dohAnswer(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let q;
    try {
      q = dnsPacket.decode(Buffer.concat(chunks));
    } catch {
      res.writeHead(400);
      return res.end();
    }
    const question = q.questions?.[0];
    const name = (question?.name ?? '').toLowerCase();
    const ours = name === 'files.test' || name === 'rig.test' || name.endsWith('.rig.test');
    const answer = dnsPacket.encode({
      type: 'response',
      id: q.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (ours ? 0 : 3),
      questions: q.questions,
      answers: ours && question.type === 'A' ? [{ type: 'A', name, ttl: 60, data: address }] : [],
    });
    res.writeHead(200, { 'Content-Type': 'application/dns-message', 'Content-Length': answer.length });
    res.end(answer);
  });
}

/** echo.test names asked and the resolver that asked each (the newest 1,000). */
const askedBy = new Map();
const echoDns = createSocket('udp4');
echoDns.on('message', (msg, rinfo) => {
  let q;
  try {
    q = dnsPacket.decode(msg);
  } catch {
    return;
  }
  const question = q.questions?.[0];
  const name = (question?.name ?? '').toLowerCase();
  const ours = name === 'echo.test' || name.endsWith('.echo.test');
  if (ours) {
    askedBy.set(name, rinfo.address);
    if (askedBy.size > 1000) askedBy.delete(askedBy.keys().next().value);
  }
  const answer = dnsPacket.encode({
    type: 'response',
    id: q.id,
    flags: dnsPacket.AUTHORITATIVE_ANSWER | (ours ? 0 : 3),
    questions: q.questions,
    answers: ours && question.type === 'A' ? [{ type: 'A', name, ttl: 0, data: address }] : [],
  });
  echoDns.send(answer, rinfo.port, rinfo.address);
});

function resolverEcho(req, res) {
  const host = String(req.headers.host ?? '')
    .toLowerCase()
    .replace(/:\d+$/, '');
  const resolver = askedBy.get(host);
  res.writeHead(resolver ? 200 : 404, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(resolver ? { dns: { ip: resolver } } : { error: `nobody asked for ${host}` }));
}

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

function serve(req, res) {
  const [path, query = ''] = (req.url ?? '/').split('?');
  if (path === '/big') {
    const rate = Number(new URLSearchParams(query).get('rate'));
    return rate > 0 ? sendPaced(res, bigBytes, rate) : sendStream(res, bigBytes);
  }
  const m = /^\/bytes\/(\d{1,11})$/.exec(path);
  if (m) return sendStream(res, Math.min(Number(m[1]), 1 << 30));
  if (path === '/resolver' && /\.echo\.test(:\d+)?$/i.test(String(req.headers.host ?? '')))
    return resolverEcho(req, res);
  if (path === '/ip') return res.end(req.socket.remoteAddress?.replace(/^::ffff:/, ''));
  if (path === '/health') {
    res.writeHead(healthStatus(req.socket.remoteAddress?.replace(/^::ffff:/, '')));
    return res.end();
  }
  if (path === '/generate_204') {
    res.writeHead(204);
    return res.end();
  }
  if (path === '/honesty.html') {
    // As web servers answer browsers: gzip when the request offers it.
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? gzipSync(HONESTY_PAGE) : Buffer.from(HONESTY_PAGE);
    res.writeHead(200, {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Length': body.length,
      ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
    });
    return res.end(body);
  }
  if (path === '/honesty.txt') {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(HONESTY_BODY) });
    return res.end(HONESTY_BODY);
  }
  if (path === '/dns-query' && req.method === 'POST' && req.socket.encrypted) return dohAnswer(req, res);
  res.setHeader('Content-Type', 'text/html');
  res.end('<!doctype html><title>files.test</title><p>Hello from the rig internet.</p>\n');
}
const http = createServer(serve);
http.keepAliveTimeout = 60_000;
const httpSecond = createServer(serve);
const https = tlsCert ? createHttpsServer({ cert: readFileSync(tlsCert), key: readFileSync(tlsKey) }, serve) : null;
const udp = createSocket('udp4');
udp.on('message', (msg, rinfo) => udp.send(msg, rinfo.port, rinfo.address));
udp.bind(7, address, () =>
  echoDns.bind(5353, address, () =>
    http.listen(80, address, () =>
      httpSecond.listen(18080, address, () =>
        https ? https.listen(443, address, () => process.stdout.write('ready\n')) : process.stdout.write('ready\n'),
      ),
    ),
  ),
);
