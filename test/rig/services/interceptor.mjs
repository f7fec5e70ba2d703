// A dishonest node's TLS interceptor (the honesty checks' test, #43): the node's own outgoing TLS
// is redirected here by nftables and met with a certificate from the interceptor's own CA, for
// whatever name was asked, as a middlebox that reads HTTPS does.
// Usage: node interceptor.mjs LISTEN_PORT CERT_FILE KEY_FILE
import { readFileSync } from 'node:fs';
import { createServer } from 'node:tls';

const [port, certFile, keyFile] = [Number(process.argv[2]), process.argv[3], process.argv[4]];
createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (s) => {
  s.on('error', () => {});
  s.end('HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\nintercepted\n');
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
