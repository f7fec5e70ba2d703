import type { PeerCertificate } from 'node:tls';
import type { OvpnProfile } from './profile.js';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

/** OpenVPN's subject string: "C=JP, O=Example, CN=server" in the certificate's order. */
function subjectString(cert: PeerCertificate): string {
  return Object.entries(cert.subject ?? {})
    .flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => `${k}=${x}`) : [`${k}=${v}`]))
    .join(', ');
}

/**
 * The checks OpenVPN makes beyond the chain: `remote-cert-tls server` (extended key usage
 * serverAuth) and `verify-x509-name`. Returns why the certificate is refused, or null.
 */
export function checkServerCertificate(
  cert: PeerCertificate,
  profile: Pick<OvpnProfile, 'remoteCertTls' | 'verifyX509Name'>,
): string | null {
  if (profile.remoteCertTls === 'server' && !(cert.ext_key_usage ?? []).includes(SERVER_AUTH)) {
    return 'remote-cert-tls server: the certificate has no TLS Web Server Authentication key usage';
  }
  const v = profile.verifyX509Name;
  if (v) {
    const cn = typeof cert.subject?.CN === 'string' ? cert.subject.CN : '';
    const ok =
      v.type === 'name'
        ? cn === v.name
        : v.type === 'name-prefix'
          ? cn.startsWith(v.name)
          : subjectString(cert) === v.name;
    if (!ok)
      return `verify-x509-name ${v.name} ${v.type}: the certificate is for "${v.type === 'subject' ? subjectString(cert) : cn}"`;
  }
  return null;
}
