import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { ErrorCodes, GatehopError, settleFirst } from '../common/index.js';
import { dialNodeTcp, tcpErrorCode } from './node-tcp.js';
import { judgeNodeCertificate, trustedCas, type NodeTrust, type TrustRule } from './node-trust.js';
import type { UpstreamProxy } from './upstream-proxy.js';

export interface NodeTlsOptions {
  host: string;
  port: number;
  trust: NodeTrust;
  /** Send the DDNS name as SNI (SoftEther's client and Windows' SSTP do); off where a filter reads SNI. */
  sni?: boolean;
  upstream?: UpstreamProxy | null;
  alpn?: string[];
  signal: AbortSignal;
  /** What the connection is for, in errors ("SSTP to vpn123.opengw.net (1.2.3.4:443)"). */
  what: string;
}

/** A TLS connection to a node whose certificate the node trust rule accepted, and the rule that did. */
export interface NodeTlsConnection {
  tls: TLSSocket;
  rule: TrustRule;
  /** Why the rule accepted it ("ISRG Root X1 vouches for it as vpn1.opengw.net"). */
  detail: string;
}

/**
 * The one TLS dial to a node for SSTP and SE-VPN: TCP (straight or through the upstream), then
 * TLS judged by the node trust rule (node-trust.ts) after the handshake. The name checked is the
 * DDNS name, whether or not it went out as SNI, and never the address dialled. A refused
 * certificate is GH_ERR_NODE_CERT_REFUSED with the reason; the connection is closed before any
 * protocol byte is sent.
 */
export async function dialNodeTls(o: NodeTlsOptions): Promise<NodeTlsConnection> {
  const tcp = await dialNodeTcp({ host: o.host, port: o.port, upstream: o.upstream, signal: o.signal, what: o.what });
  return settleFirst<NodeTlsConnection>({ signal: o.signal, what: `TLS with ${o.what}` }, (settle) => {
    const name = o.trust.serverName;
    const tls = tlsConnect({
      socket: tcp,
      ...(o.sni !== false && name ? { servername: name } : {}),
      ca: trustedCas(o.trust),
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
      ...(o.alpn ? { ALPNProtocols: o.alpn } : {}),
    });
    const onError = (err: NodeJS.ErrnoException): void =>
      settle.reject(new GatehopError(tcpErrorCode(err), `TLS with ${o.what}: ${err.message}`, { cause: err }));
    const onSecure = (): void => {
      const verdict = judgeNodeCertificate(tls, o.trust);
      if (!verdict.ok)
        return settle.reject(
          new GatehopError(ErrorCodes.NODE_CERT_REFUSED, `${o.what}: the certificate is refused: ${verdict.why}`),
        );
      settle.resolve({ tls, rule: verdict.rule, detail: verdict.detail });
    };
    tls.once('error', onError);
    tls.once('secureConnect', onSecure);
    return (resolved) => {
      tls.off('error', onError);
      tls.off('secureConnect', onSecure);
      if (!resolved) tls.destroy();
    };
  }).catch((err: unknown) => {
    tcp.destroy();
    throw err;
  });
}
