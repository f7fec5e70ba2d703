/**
 * core/sstp against servers that say no or misbehave (a volunteer server is untrusted): a real TLS
 * server on loopback, with a certificate for a node's DDNS name from a CA made here, scripted to
 * answer the SSTP request with another status, a Call Connect Nak, an Abort, garbage, silence or a
 * hang-up. Each is a coded error naming the node, and nothing is left open.
 */
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/common/index.js';
import { AttrId, encodeControl, MsgType, SstpClient } from '../../core/sstp/index.js';
import { caSignedCert } from '../helpers/self-signed.js';

const NAME = 'public-vpn-7.opengw.net';
let pki: { ca: string; key: string; cert: string };
let server: Server | null = null;
const sockets = new Set<TLSSocket>();

beforeAll(() => {
  pki = caSignedCert('Hostile Test CA', NAME);
});

afterEach(async () => {
  for (const s of sockets) s.destroy();
  sockets.clear();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});

/** A TLS server whose answer to the SSTP request (and to what follows) the test scripts. */
async function serve(
  onRequest: (s: TLSSocket, request: string) => void,
  onSstp?: (s: TLSSocket, bytes: Buffer) => void,
): Promise<number> {
  server = createServer({ key: pki.key, cert: pki.cert }, (s) => {
    sockets.add(s);
    s.on('error', () => {});
    let buf = Buffer.alloc(0);
    let answered = false;
    // After the HTTP head, the stream as SSTP packets, one onSstp call each (a client may send
    // several in one TLS record, as it does when a turn's writes go together).
    let sstp = Buffer.alloc(0);
    const packets = (bytes: Buffer): void => {
      sstp = Buffer.concat([sstp, bytes]);
      while (sstp.length >= 4 && sstp.length >= (sstp.readUInt16BE(2) & 0x0fff)) {
        const len = Math.max(4, sstp.readUInt16BE(2) & 0x0fff);
        onSstp?.(s, sstp.subarray(0, len));
        sstp = sstp.subarray(len);
      }
    };
    s.on('data', (chunk: Buffer) => {
      if (answered) return packets(chunk);
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      answered = true;
      onRequest(s, buf.subarray(0, end).toString());
      const rest = buf.subarray(end + 4);
      if (rest.length) packets(rest);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return (server!.address() as { port: number }).port;
}

const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\nServer: Microsoft-HTTPAPI/2.0\r\n\r\n';
const status = (attribute: number, code: number): Buffer => Buffer.from([0, 0, 0, attribute, 0, 0, 0, code]);

function client(port: number): SstpClient {
  const c = new SstpClient({
    host: '127.0.0.1',
    port,
    trust: { profileCa: [], extraRoots: [pki.ca], serverName: NAME },
    logger: silentLogger(),
  });
  c.on('error', () => {});
  return c;
}

describe('SSTP against hostile or refusing servers', () => {
  it('sends SSTP_DUPLEX_POST to the fixed URI with the node name as Host, and a 403 is GH_ERR_SSTP_REFUSED', async () => {
    let request = '';
    const port = await serve((s, req) => {
      request = req;
      s.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
    });
    await expect(client(port).connect({ timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'GH_ERR_SSTP_REFUSED',
      message: `${NAME} (127.0.0.1:${port}) refused SSTP: HTTP/1.1 403 Forbidden`,
    });
    expect(request).toMatch(/^SSTP_DUPLEX_POST \/sra_\{BA195980-CD49-458b-9E23-C84EE0ADCD75\}\/ HTTP\/1\.1\r\n/);
    expect(request).toMatch(new RegExp(`\\r\\nHost: ${NAME.replace(/\./g, '\\.')}\\r\\n`));
    expect(request).toMatch(/\r\nContent-Length: 18446744073709551615\r\n/);
    expect(request).toMatch(/\r\nSSTPCORRELATIONID: \{[0-9A-F-]{36}\}/);
  });

  it('a Call Connect Nak is GH_ERR_SSTP_REFUSED with the status it gave', async () => {
    const port = await serve(
      (s) => s.write(OK),
      (s) => s.write(encodeControl(MsgType.CALL_CONNECT_NAK, [{ id: AttrId.STATUS_INFO, value: status(1, 4) }])),
    );
    await expect(client(port).connect({ timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'GH_ERR_SSTP_REFUSED',
      message: expect.stringMatching(/refused the SSTP call: value not supported \(attribute 1\)$/),
    });
  });

  it('an Abort after the Call Connect Ack (during PPP) is GH_ERR_SSTP_REFUSED naming the node', async () => {
    const ack = encodeControl(MsgType.CALL_CONNECT_ACK, [
      { id: AttrId.CRYPTO_BINDING_REQ, value: Buffer.concat([Buffer.from([0, 0, 0, 2]), Buffer.alloc(32, 7)]) },
    ]);
    let gotPpp = false;
    const port = await serve(
      (s) => s.write(OK),
      (s, bytes) => {
        if (bytes[1] === 1 && bytes.readUInt16BE(4) === MsgType.CALL_CONNECT_REQUEST) return void s.write(ack);
        if (bytes[1] === 0) {
          gotPpp = true; // our LCP Configure-Request: the PPP phase began
          s.write(encodeControl(MsgType.CALL_ABORT, [{ id: AttrId.STATUS_INFO, value: status(0, 8) }]));
        }
      },
    );
    await expect(client(port).connect({ timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'GH_ERR_SSTP_REFUSED',
      message: expect.stringMatching(
        new RegExp(`^${NAME.replace(/\./g, '\\.')} .* aborted the SSTP call: negotiation timeout`),
      ),
    });
    expect(gotPpp).toBe(true);
  });

  it('a Call Connect Ack without a crypto binding request, garbage instead of SSTP, or a non-HTTP answer: GH_ERR_SSTP_PROTOCOL', async () => {
    for (const reply of [encodeControl(MsgType.CALL_CONNECT_ACK), Buffer.from('\x00\x01\x02\x03garbage')]) {
      const port = await serve(
        (s) => s.write(OK),
        (s) => s.write(reply),
      );
      await expect(client(port).connect({ timeoutMs: 5_000 })).rejects.toMatchObject({ code: 'GH_ERR_SSTP_PROTOCOL' });
      await new Promise<void>((r) => server!.close(() => r()));
      server = null;
    }
    const port = await serve((s) => s.write('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
    await expect(client(port).connect({ timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'GH_ERR_SSTP_PROTOCOL',
      message: expect.stringMatching(/did not answer in HTTP/),
    });
  });

  it('a server that answers nothing times out at the deadline; one that hangs up is refused; nothing stays open', async () => {
    const silent = await serve(() => {});
    const t0 = Date.now();
    await expect(client(silent).connect({ timeoutMs: 1_500 })).rejects.toMatchObject({
      code: 'GH_ERR_EGRESS_CONNECT_TIMEOUT',
    });
    expect(Date.now() - t0).toBeLessThan(3_000);
    await new Promise<void>((r) => server!.close(() => r()));
    const hangUp = await serve((s) => s.destroy());
    await expect(client(hangUp).connect({ timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'GH_ERR_SSTP_REFUSED',
      message: expect.stringMatching(/closed the connection before answering/),
    });
    // The client closed its side of every connection.
    await new Promise((r) => setTimeout(r, 100));
    for (const s of sockets) expect(s.destroyed || s.readableEnded).toBe(true);
  });

  it('a server that asks (Echo Requests) and never reads is dropped with GH_ERR_BUFFER_OVERFLOW once what we owe it passes the bound (#34 item 3)', async () => {
    const ack = encodeControl(MsgType.CALL_CONNECT_ACK, [
      { id: AttrId.CRYPTO_BINDING_REQ, value: Buffer.concat([Buffer.from([0, 0, 0, 2]), Buffer.alloc(32, 7)]) },
    ]);
    const echo = encodeControl(MsgType.ECHO_REQUEST);
    let sent = 0;
    let flooding = false;
    const port = await serve(
      (s) => s.write(OK),
      (s, bytes) => {
        if (bytes[1] !== 1 || bytes.readUInt16BE(4) !== MsgType.CALL_CONNECT_REQUEST || flooding) return;
        s.write(ack);
        flooding = true;
        // From now on this server reads nothing: the client's answers pile up on its side.
        s.pause();
        const batch = Buffer.concat(new Array<Buffer>(4096).fill(echo));
        const more = (): void => {
          // Bounded: 40 MiB of requests is ~5 million answers owed, far past any bound.
          while (!s.destroyed && sent < 40 * 1024 * 1024) {
            sent += batch.length;
            if (!s.write(batch)) return void s.once('drain', more);
          }
        };
        more();
      },
    );
    const c = client(port);
    await expect(c.connect({ timeoutMs: 20_000 })).rejects.toMatchObject({
      code: 'GH_ERR_BUFFER_OVERFLOW',
      message: expect.stringMatching(/stopped reading/),
    });
    expect(c.state).toBe('DISCONNECTED');
    // Dropped well before the server ran out of requests to send.
    expect(sent).toBeLessThan(40 * 1024 * 1024);
  }, 30_000);

  it('close() while PPP runs sends Call Disconnect and ends the connection', async () => {
    const ack = encodeControl(MsgType.CALL_CONNECT_ACK, [
      { id: AttrId.CRYPTO_BINDING_REQ, value: Buffer.concat([Buffer.from([0, 0, 0, 2]), Buffer.alloc(32, 7)]) },
    ]);
    const seen: number[] = [];
    let ended = false;
    let c: SstpClient | null = null;
    const port = await serve(
      (s) => {
        s.write(OK);
        s.on('end', () => (ended = true));
      },
      (s, bytes) => {
        if (bytes[1] === 1) seen.push(bytes.readUInt16BE(4));
        if (bytes[1] === 1 && bytes.readUInt16BE(4) === MsgType.CALL_CONNECT_REQUEST) return void s.write(ack);
        if (bytes[1] === 0 && !seen.includes(-1)) {
          seen.push(-1); // PPP began: the user quits now
          c!.close();
        }
      },
    );
    c = client(port);
    await expect(c.connect({ timeoutMs: 5_000 })).rejects.toMatchObject({ code: 'GH_ERR_EGRESS_CLOSED' });
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toContain(MsgType.CALL_DISCONNECT);
    expect(ended).toBe(true);
    expect(c.state).toBe('DISCONNECTED');
  });

  it('refuses a server whose certificate is for another node', async () => {
    const port = await serve((s) => s.write(OK));
    const c = new SstpClient({
      host: '127.0.0.1',
      port,
      trust: { profileCa: [], extraRoots: [pki.ca], serverName: 'public-vpn-8.opengw.net' },
      logger: silentLogger(),
    });
    c.on('error', () => {});
    await expect(c.connect({ timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'GH_ERR_NODE_CERT_REFUSED',
      message: expect.stringMatching(/public-vpn-8\.opengw\.net .*certificate is refused/),
    });
  });
});
