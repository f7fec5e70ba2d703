/**
 * The way into an SSTP server: TCP and TLS by the one node dial (core/reach/node-tls: straight or
 * through the user's upstream proxy, the certificate judged by the node trust rule), and the HTTP
 * request SSTP starts with, `SSTP_DUPLEX_POST` to its fixed URI, answered by `HTTP/1.1 200`.
 */
import { randomUUID } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { ErrorCodes, GatehopError, isGatehopError, readHttpHead, settleFirst, type HttpHead } from '../common/index.js';
import { dialNodeTls, type NodeTrust, type TrustRule, type UpstreamProxy } from '../reach/index.js';

export const SSTP_URI = '/sra_{BA195980-CD49-458b-9E23-C84EE0ADCD75}/';
const MAX_HTTP_HEADER = 8 * 1024;

export interface SstpDialOptions {
  /** Where to connect: the node's address (or its name). */
  host: string;
  port: number;
  /** Whom the certificate may come from; `trust.serverName` is also the HTTP Host and the SNI. */
  trust: NodeTrust & { serverName: string };
  /** Send the name as SNI (what Windows does); off, a filter that reads SNI does not see it. */
  sni?: boolean;
  upstream?: UpstreamProxy | null;
  signal: AbortSignal;
}

export interface SstpConnection {
  tls: TLSSocket;
  /** What came after the HTTP response in the same read: the first SSTP bytes. */
  rest: Buffer;
  /** The server certificate as DER, for the crypto binding's certificate hash. */
  certDer: Buffer;
  protocol: string | null;
  /** Which trust rule accepted the certificate. */
  trustRule: TrustRule;
}

export async function dialSstp(o: SstpDialOptions): Promise<SstpConnection> {
  o.signal.throwIfAborted();
  const where = `${o.trust.serverName} (${o.host}:${o.port})`;
  const { tls, rule } = await dialNodeTls({
    host: o.host,
    port: o.port,
    trust: o.trust,
    ...(o.sni !== undefined ? { sni: o.sni } : {}),
    upstream: o.upstream ?? null,
    alpn: ['http/1.1'],
    signal: o.signal,
    what: `SSTP to ${where}`,
  });
  try {
    const rest = await httpHandshake(tls, o, where);
    return { tls, rest, certDer: tls.getPeerCertificate().raw, protocol: tls.getProtocol(), trustRule: rule };
  } catch (err) {
    tls.destroy();
    throw err;
  }
}

function httpHandshake(tls: TLSSocket, o: SstpDialOptions, where: string): Promise<Buffer> {
  return settleFirst<Buffer>({ signal: o.signal, what: `SSTP to ${where}` }, (settle) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      let head: HttpHead | null;
      try {
        head = readHttpHead(buf, {
          maxHead: MAX_HTTP_HEADER,
          fail: (message) => new GatehopError(ErrorCodes.SSTP_PROTOCOL, `${where} did not answer in HTTP: ${message}`),
        });
      } catch (err) {
        return settle.reject(err as Error);
      }
      if (!head) return;
      if (head.status !== 200) {
        const statusLine = buf.subarray(0, buf.indexOf('\r\n')).toString('latin1');
        return settle.reject(
          new GatehopError(ErrorCodes.SSTP_REFUSED, `${where} refused SSTP: ${statusLine.slice(0, 80)}`),
        );
      }
      // The rest of the stream is SSTP; pause so nothing is read before the client listens.
      tls.pause();
      settle.resolve(buf.subarray(head.length));
    };
    const onError = (err: Error): void =>
      settle.reject(
        isGatehopError(err)
          ? err
          : new GatehopError(ErrorCodes.EGRESS_FAILED, `SSTP to ${where}: ${err.message}`, { cause: err }),
      );
    const onClose = (): void =>
      settle.reject(
        new GatehopError(ErrorCodes.SSTP_REFUSED, `${where} closed the connection before answering the SSTP request`),
      );
    tls.on('data', onData);
    tls.on('error', onError);
    tls.on('close', onClose);
    // Content-Length is the largest 64-bit number: the request body is the rest of the connection.
    tls.write(
      `SSTP_DUPLEX_POST ${SSTP_URI} HTTP/1.1\r\nHost: ${o.trust.serverName}\r\nContent-Length: 18446744073709551615\r\nSSTPCORRELATIONID: {${randomUUID().toUpperCase()}}\r\n\r\n`,
    );
    return () => {
      tls.off('data', onData);
      tls.off('error', onError);
      tls.off('close', onClose);
    };
  });
}
