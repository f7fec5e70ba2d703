import { X509Certificate } from 'node:crypto';
import { checkServerIdentity, rootCertificates, type DetailedPeerCertificate, type TLSSocket } from 'node:tls';

/**
 * Whom a node's TLS certificate may come from, the same for SSTP and SE-VPN. A SoftEther node
 * presents one certificate on every protocol, and its OpenVPN profile from the list carries the CA
 * it chains to: that CA is trusted for the chain alone, as OpenVPN trusts it (no name: the profile
 * names none, and the CA is that node's own). Otherwise the OS's roots, and a CA the user adds
 * (`tunnel.sstp.ca`), vouch for it, and then only under the node's DDNS name: a CA that signs many
 * servers must not let one stand in for another.
 */
export interface NodeTrust {
  /** PEM CAs trusted for the chain alone: the `<ca>` in the node's own profile. */
  ca: readonly string[];
  /** PEM CAs trusted beside the OS roots, under the DDNS name: the user's extra CA. */
  roots?: readonly string[];
  /** `<HostName>.opengw.net`: what a certificate from the OS roots must name; null: the roots are not asked. */
  serverName: string | null;
}

/** The CA list to hand to tls.connect so that either way can verify (the decision is checkNodeCertificate's). */
export function trustedCas(trust: NodeTrust): string[] {
  return trust.serverName ? [...rootCertificates, ...(trust.roots ?? []), ...trust.ca] : [...trust.ca];
}

/**
 * After the handshake (made with `ca: trustedCas(trust)`, rejectUnauthorized false): null when the
 * certificate is trusted under the rule above, else why not, in words a user can act on.
 */
export function checkNodeCertificate(tls: TLSSocket, trust: NodeTrust): string | null {
  if (!tls.authorized) return `not trusted (${String(tls.authorizationError ?? 'no chain')})`;
  const leaf = tls.getPeerCertificate(true);
  if (!leaf || Object.keys(leaf).length === 0) return 'no certificate';
  const own = new Set(trust.ca.map((pem) => fingerprintOf(pem)).filter((f): f is string => f !== null));
  if (chainOf(leaf).some((c) => own.has(c.fingerprint256))) return null;
  if (!trust.serverName) return 'does not chain to the CA in the node’s profile';
  // Chained to the OS roots or the user's CA (the handshake verified it): the name must match.
  const mismatch = checkServerIdentity(trust.serverName, leaf);
  return mismatch ? `not for ${trust.serverName} (${mismatch.message})` : null;
}

/** The leaf, then each issuer up to the root (a self-signed certificate is its own issuer). */
function chainOf(cert: DetailedPeerCertificate): DetailedPeerCertificate[] {
  const out = [cert];
  let c = cert;
  while (out.length < 16 && c.issuerCertificate && c.issuerCertificate !== c) {
    c = c.issuerCertificate;
    out.push(c);
  }
  return out;
}

function fingerprintOf(pem: string): string | null {
  try {
    return new X509Certificate(pem).fingerprint256;
  } catch {
    return null;
  }
}
