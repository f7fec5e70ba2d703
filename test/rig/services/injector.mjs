// A dishonest node's transparent HTTP proxy (the honesty checks' test, #43): the node's own
// outgoing HTTP (SecureNAT's sockets) is redirected here by nftables; each request goes on to the
// origin's second port and its answer comes back with a script injected, as an ad-injecting
// volunteer or ISP would do it.
// Usage: node injector.mjs LISTEN_PORT ORIGIN_HOST ORIGIN_PORT
import { connect, createServer } from 'node:net';

const [port, originHost, originPort] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])];
const INJECTED = '<script src="http://ads.injector.test/track.js"></script>\n';

createServer((client) => {
  client.on('error', () => {});
  let head = Buffer.alloc(0);
  client.on('data', function onHead(chunk) {
    head = Buffer.concat([head, chunk]);
    if (head.indexOf('\r\n\r\n') < 0) return;
    client.off('data', onHead);
    const upstream = connect(originPort, originHost);
    upstream.on('error', () => client.destroy());
    const parts = [];
    upstream.on('data', (c) => parts.push(c));
    upstream.on('end', () => {
      const res = Buffer.concat(parts);
      const end = res.indexOf('\r\n\r\n');
      const lines = res.subarray(0, end).toString('latin1').split('\r\n');
      const body = Buffer.concat([res.subarray(end + 4), Buffer.from(INJECTED)]);
      const status = lines[0].replace(/ 204 No Content$/, ' 200 OK');
      const kept = lines.slice(1).filter((l) => !/^(content-length|connection|transfer-encoding):/i.test(l));
      client.end(
        Buffer.concat([
          Buffer.from(
            `${[status, ...kept, `Content-Length: ${body.length}`, 'Connection: close'].join('\r\n')}\r\n\r\n`,
          ),
          body,
        ]),
      );
    });
    // The request as it came, closed after the answer.
    upstream.write(head.toString('latin1').replace(/\r\nConnection: [^\r]*/i, ''));
  });
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
