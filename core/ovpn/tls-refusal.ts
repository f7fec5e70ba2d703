/**
 * The server refused our TLS: OpenSSL's answers for no shared version or cipher suite, or a key too
 * weak; or TLS_HELLO_UNANSWERED, a server that acknowledged our ClientHello at the OpenVPN layer and
 * answered nothing (an OpenVPN server refuses a version it does not speak so: its alert never
 * leaves it). Only these turn on legacy TLS. Silence never does (#34): a handshake that the server
 * never acknowledged was lost on the way, and a filter that drops it must not make us offer TLS 1.0
 * with SECLEVEL 0.
 */
const TLS_REFUSALS =
  /TLS_HELLO_UNANSWERED|UNSUPPORTED_PROTOCOL|WRONG_VERSION_NUMBER|NO_PROTOCOLS_AVAILABLE|PROTOCOL_VERSION|HANDSHAKE_FAILURE|NO_SHARED_CIPHER|NO_CIPHERS_AVAILABLE|KEY_TOO_SMALL|MD_TOO_WEAK|INSUFFICIENT_SECURITY/;

export function isTlsVersionOrCipherRefusal(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' && TLS_REFUSALS.test(cause.code);
}
