// The least a Node.js SOCKS5 relay can do: no auth, CONNECT to IPv4 only, then pipe() both ways.
// bench/proxy.ts runs it beside Gatehop as the ceiling of any relay written on Node's sockets here.
// Usage: node bench/lib/bare-relay.mjs PORT
import { connect, createServer } from 'node:net';
import { pipeline } from 'node:stream';

createServer({ noDelay: true }, (client) => {
  client.once('data', () => {
    client.write(Buffer.from([5, 0]));
    client.once('data', (req) => {
      const host = `${req[4]}.${req[5]}.${req[6]}.${req[7]}`;
      const up = connect({ host, port: req.readUInt16BE(8), noDelay: true }, () => {
        client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
        pipeline(up, client, () => {});
        pipeline(client, up, () => {});
      });
      up.on('error', () => client.destroy());
    });
  });
  client.on('error', () => {});
}).listen(Number(process.argv[2]), '127.0.0.1');
