import { connect as tlsConnect } from 'node:tls';
import { ErrorCodes, GatehopError } from '../common/index.js';
import { judgeNodeCertificate, trustedCas, type TrustRule } from '../reach/index.js';
import { clientKeyMethod2, optionsString } from './control-messages.js';
import type { ControlSessionHost, ControlSessionOptions } from './control-types.js';
import { isSupportedCipher, SUPPORTED_CIPHERS } from './data-channel.js';
import { ControlDuplex, type KeyState } from './key-state.js';
import { Op } from './packet.js';

/** A TLS record split to fit one control packet (OpenVPN's own clients send about as much). */
const CONTROL_PAYLOAD_MAX = 1100;

/** What a key's TLS session needs of the control session around it. */
export interface ControlTlsContext {
  o: ControlSessionOptions;
  host: ControlSessionHost;
  /** The rule key 0's certificate passed under: a renegotiation must pass under the same. */
  trustRule(): TrustRule | null;
  setTrustRule(rule: TrustRule): void;
  /** The handshake finished and the certificate passed: key method 2 goes next. */
  secured(k: KeyState): void;
  plaintext(k: KeyState, chunk: Buffer): void;
}

/**
 * A key state's TLS session over the reliability layer (notes §4): the node trust rule judges the
 * certificate at secureConnect (OpenVPN checks the chain against <ca> and never a name), the first
 * handshake is bounded in time, and a renegotiation's failure keeps the current key.
 */
export function startControlTls(k: KeyState, c: ControlTlsContext): void {
  k.started = true;
  if (k.keyId === 0) c.host.state('AUTH', 'TLS handshake');
  const { profile, remoteHost, logger } = c.o;
  const duplex = new ControlDuplex((chunk) => {
    for (let o = 0; o < chunk.length; o += CONTROL_PAYLOAD_MAX)
      k.rel.send(Op.CONTROL_V1, chunk.subarray(o, o + CONTROL_PAYLOAD_MAX));
  });
  k.tlsIn = duplex;
  const tls = tlsConnect({
    socket: duplex,
    ca: trustedCas(c.o.trust),
    ...(profile.cert ? { cert: profile.cert } : {}),
    ...(profile.key ? { key: profile.key } : {}),
    // Decided at secureConnect by the node trust rule: OpenVPN itself checks the chain against
    // <ca> and never a name, which lets any certificate from a public <ca> pass for any node.
    checkServerIdentity: () => undefined,
    rejectUnauthorized: false,
    ...(c.o.legacyTls ? { minVersion: 'TLSv1' as const, ciphers: 'DEFAULT:@SECLEVEL=0' } : {}),
  });
  k.tls = tls;
  // A first handshake that does not finish in time: a refusal only when the server acknowledged
  // what we sent after our reset (it has our ClientHello and chose not to answer), else a
  // timeout (the hello, or the answer, was lost on the way).
  const handshakeMs = c.o.tlsHandshakeMs;
  const handshakeTimer =
    k.keyId === 0
      ? setTimeout(() => {
          if (k.tls !== tls) return; // this key state is gone
          const heard = k.rel.highestAcked >= 1;
          const err = Object.assign(
            new Error(
              heard
                ? `the server took our TLS hello and did not answer within ${handshakeMs / 1000} s`
                : `no TLS handshake within ${handshakeMs / 1000} s`,
            ),
            { code: heard ? 'TLS_HELLO_UNANSWERED' : 'TLS_HANDSHAKE_TIMEOUT' },
          );
          c.host.fatal(
            new GatehopError(ErrorCodes.EGRESS_CONNECT_TIMEOUT, `TLS with ${remoteHost}: ${err.message}`, {
              cause: err,
            }),
          );
        }, handshakeMs)
      : null;
  handshakeTimer?.unref();
  tls.once('close', () => handshakeTimer && clearTimeout(handshakeTimer));
  tls.on('error', (err: Error) => {
    if (k.keyId === 0)
      c.host.fatal(
        new GatehopError(ErrorCodes.EGRESS_FAILED, `TLS with ${remoteHost}: ${err.message}`, { cause: err }),
      );
    else
      logger.warn(
        { event: 'renegotiation-failed', keyId: k.keyId, err: err.message },
        'renegotiation TLS failed; keeping the current key',
      );
  });
  tls.on('secureConnect', () => {
    if (handshakeTimer) clearTimeout(handshakeTimer);
    const version = tls.getProtocol();
    if (c.o.legacyTls && k.keyId === 0) {
      const weak = version === 'TLSv1' || version === 'TLSv1.1';
      const fields = { event: 'legacy-tls-negotiated', protocol: version, cipher: tls.getCipher()?.name };
      if (weak) logger.warn(fields, `control channel with ${remoteHost} is ${version} (insecure: old node)`);
      else logger.info(fields, `control channel with ${remoteHost} is ${version} after all`);
    }
    const verdict = judgeNodeCertificate(tls, c.o.trust);
    if (!verdict.ok) {
      c.host.fatal(
        new GatehopError(ErrorCodes.NODE_CERT_REFUSED, `server certificate of ${remoteHost} refused: ${verdict.why}`),
        { reconnect: false },
      );
      return;
    }
    if (k.keyId === 0) {
      c.setTrustRule(verdict.rule);
      logger.debug({ event: 'node-certificate-detail', detail: verdict.detail }, verdict.detail);
    } else if (verdict.rule !== c.trustRule()) {
      c.host.fatal(
        new GatehopError(
          ErrorCodes.NODE_CERT_REFUSED,
          `${remoteHost} renegotiated with a certificate under another rule (${verdict.rule}, was ${c.trustRule()})`,
        ),
        { reconnect: false },
      );
      return;
    }
    c.secured(k);
  });
  tls.on('data', (chunk: Buffer) => c.plaintext(k, chunk));
}

/** Key method 2: our part of the key material, the options string and peer info (notes §4.3). */
export function sendKeyMethod(k: KeyState, c: Pick<ControlTlsContext, 'o' | 'host'>): void {
  const p = c.o.profile;
  const cipher = (p.cipher ?? p.dataCiphers[0] ?? 'AES-128-CBC').toUpperCase();
  const aead = /GCM|POLY1305/.test(cipher);
  const ciphers = [...new Set([...p.dataCiphers, ...(p.cipher ? [p.cipher] : [])].filter(isSupportedCipher))];
  const peerInfo = [
    'IV_VER=2.6.14',
    'IV_PLAT=linux',
    'IV_TCPNL=1',
    'IV_NCP=2',
    `IV_CIPHERS=${(ciphers.length ? ciphers : SUPPORTED_CIPHERS).join(':')}`,
    'IV_PROTO=142',
    'IV_GUI_VER=gatehop_0.1.0',
    '',
  ].join('\n');
  const credentials = c.o.credentials;
  if (p.authUserPass && !credentials) {
    c.host.fatal(
      new GatehopError(ErrorCodes.PROFILE_INVALID, 'the profile asks for a user name and password and none were given'),
    );
    return;
  }
  const keyBits = Number(/(\d{3})/.exec(cipher)?.[1] ?? 256);
  const { message, keys } = clientKeyMethod2({
    options: optionsString({ proto: c.o.proto, cipher, auth: p.auth, aead, keyBits }),
    username: credentials?.username ?? '',
    password: credentials?.password ?? '',
    peerInfo,
  });
  k.clientKeys = keys;
  k.tls!.write(message);
}
