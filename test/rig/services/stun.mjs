// A STUN server (RFC 8489 Binding only) for the leak test's WebRTC check (#64): it answers each
// Binding request with the address and port it came from (XOR-MAPPED-ADDRESS), as public STUN
// servers do, so a browser's server-reflexive candidate names the address a site would learn.
// Usage: node stun.mjs HOST PORT_FILE   (listens on HOST:3478/udp, then writes the port to PORT_FILE)
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';

const [host, portFile] = [process.argv[2], process.argv[3]];
const COOKIE = 0x2112a442;
const sock = createSocket('udp4');
sock.on('message', (msg, rinfo) => {
  // A Binding request: type 0x0001, the magic cookie, a 12-byte transaction id.
  if (msg.length < 20 || msg.readUInt16BE(0) !== 0x0001 || msg.readUInt32BE(4) !== COOKIE) return;
  const attr = Buffer.alloc(12);
  attr.writeUInt16BE(0x0020, 0); // XOR-MAPPED-ADDRESS
  attr.writeUInt16BE(8, 2);
  attr.writeUInt8(0, 4);
  attr.writeUInt8(0x01, 5); // IPv4
  attr.writeUInt16BE(rinfo.port ^ (COOKIE >>> 16), 6);
  const a = rinfo.address.split('.').map(Number);
  attr.writeUInt32BE((((a[0] << 24) | (a[1] << 16) | (a[2] << 8) | a[3]) ^ COOKIE) >>> 0, 8);
  const head = Buffer.alloc(20);
  head.writeUInt16BE(0x0101, 0); // Binding success response
  head.writeUInt16BE(attr.length, 2);
  head.writeUInt32BE(COOKIE, 4);
  msg.copy(head, 8, 8, 20);
  sock.send(Buffer.concat([head, attr]), rinfo.port, rinfo.address);
});
sock.bind(3478, host, () => writeFileSync(portFile, String(sock.address().port)));
