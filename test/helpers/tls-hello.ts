/** A minimal TLS 1.2 ClientHello carrying `name` as its SNI (written for tests; real ones come from node:tls). */
export function clientHello(name: string): Buffer {
  const host = Buffer.from(name, 'latin1');
  const sniEntry = Buffer.concat([Buffer.from([0]), u16(host.length), host]);
  const sniExt = Buffer.concat([u16(0), u16(sniEntry.length + 2), u16(sniEntry.length), sniEntry]);
  const body = Buffer.concat([
    Buffer.from([0x03, 0x03]),
    Buffer.alloc(32, 7),
    Buffer.from([0]), // session id
    u16(2),
    Buffer.from([0x13, 0x01]),
    Buffer.from([1, 0]), // compression: null
    u16(sniExt.length),
    sniExt,
  ]);
  const hs = Buffer.concat([
    Buffer.from([1, (body.length >> 16) & 255, (body.length >> 8) & 255, body.length & 255]),
    body,
  ]);
  return Buffer.concat([Buffer.from([0x16, 0x03, 0x01]), u16(hs.length), hs]);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}
