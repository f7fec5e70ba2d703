import { X509Certificate } from 'node:crypto';
import { checkServerIdentity, type DetailedPeerCertificate, type PeerCertificate, type TLSSocket } from 'node:tls';
import { parseCertificate, publicRoots, subjectName } from './public-roots.js';

/**
 * Whom a node's TLS certificate may come from: one rule for SSTP, SE-VPN and OpenVPN's control
 * channel (SECURITY.md, "Node certificates").
 *
 * The threat: VPN Gate profiles carry a *public* root as their `<ca>` (ISRG Root X1, Let's
 * Encrypt's, today), and OpenVPN checks no name. Anyone on the path with a free certificate for any
 * domain could then stand in for any node. So:
 *
 * - A certificate that chains to a publicly trusted root (the OS roots, a profile `<ca>` that is
 *   itself a public root or issued by one, or the user's `tunnel.nodeCa`) must be valid for the
 *   node's DDNS name, `<HostName>.opengw.net`; VPN Gate's shared `*.opengw.net` wildcard is valid
 *   for every such name by the usual rules (RFC 6125: one label).
 * - A profile `<ca>` that is not a public root is a private CA the profile names (self-hosted
 *   servers, the test rig, SoftEther's self-signed default): it vouches for the chain alone, as
 *   OpenVPN trusts it. It is whatever the list row carried, not proven to be the node's: only a
 *   holder of that CA's key can pass it, which for a list source is the source itself. So it
 *   counts only when the row came over HTTPS or from the user's file (`profileCaInClear` unset):
 *   a row fetched in clear could have been written by anyone on its path (#59).
 * - A node with no DDNS name (the user's own .ovpn) is judged as OpenVPN judges it: its `<ca>` for
 *   the chain, and its `verify-x509-name` where it has one. Except that a `<ca>` which is a public
 *   root (or issued by one) vouches for anyone's certificate, a free one for any domain included:
 *   with it, the profile must name the server (`verify-x509-name`), or it is refused (#59). (A
 *   `remote` under opengw.net is taken as the node's DDNS name by the caller, and checked so.)
 */
export interface NodeTrust {
  /** The `<ca>` of the node's profile (PEM; a bundle is split). Each is judged public or private. */
  profileCa: readonly string[];
  /** `tunnel.nodeCa`: extra CAs the user trusts like the OS roots, under the DDNS name. */
  extraRoots?: readonly string[];
  /** `<HostName>.opengw.net` for a listed node; null for the user's own profile (OpenVPN's rule). */
  serverName: string | null;
  /** The profile's own `remote-cert-tls` and `verify-x509-name`, applied under every rule, as OpenVPN does. */
  profileChecks?: ProfileCertChecks;
  /**
   * The profile came on a list fetched in clear, and neither an HTTPS list nor the user's file
   * vouched for its `<ca>` (VpnGateNode.caVouchedBy): a private CA in it is then not trusted,
   * since whoever wrote the row may hold its key (#59). A public CA still vouches under the name.
   */
  profileCaInClear?: boolean;
}

/** What an OpenVPN profile asks of the server's certificate beyond its chain. */
export interface ProfileCertChecks {
  remoteCertTls: 'server' | null;
  verifyX509Name: { name: string; type: 'subject' | 'name' | 'name-prefix' } | null;
}

/** Which rule accepted a certificate (shown in /status and the logs). */
export type TrustRule = 'private-ca' | 'public-ca-name' | 'own-profile';

export type TrustVerdict = { ok: true; rule: TrustRule; detail: string } | { ok: false; why: string };

/** What a rule means, in words for logs and the README. */
export const TRUST_RULE_TEXT: Readonly<Record<TrustRule, string>> = {
  'private-ca': 'the private CA in the node’s own profile (chain alone, as OpenVPN)',
  'public-ca-name': 'a public CA, for the node’s DDNS name',
  'own-profile': 'the CA in the user’s own profile (as OpenVPN checks it)',
};

interface Anchors {
  /** Private profile CAs: chain alone. */
  private: X509Certificate[];
  /** Public CAs in the user's own profile (no DDNS name): only with the profile's verify-x509-name. */
  ownPublic: X509Certificate[];
  /** The user's extra roots and public profile CAs (the OS roots are asked through publicRoots()). */
  public: X509Certificate[];
}

function anchorsOf(trust: NodeTrust): Anchors {
  const roots = publicRoots();
  const out: Anchors = { private: [], ownPublic: [], public: [] };
  for (const pem of trust.profileCa) {
    const cert = parseCertificate(pem);
    if (!cert) continue;
    if (!roots.vouchesFor(pem)) out.private.push(cert);
    else if (trust.serverName !== null) out.public.push(cert);
    else out.ownPublic.push(cert);
  }
  for (const pem of trust.extraRoots ?? []) {
    const cert = parseCertificate(pem);
    if (cert) out.public.push(cert);
  }
  return out;
}

/**
 * The CA list to hand to tls.connect (with rejectUnauthorized false) so that either rule can
 * verify; the decision is judgeNodeCertificate's, after the handshake.
 */
export function trustedCas(trust: NodeTrust): string[] {
  const own = [...trust.profileCa, ...(trust.extraRoots ?? [])];
  // Without a name the public roots cannot vouch for anything: do not even ask them.
  return trust.serverName === null ? own : [...publicRoots().pems, ...own];
}

/**
 * After the handshake: which rule accepts the node's certificate, or why none does, in words a
 * user can act on. The chain is the one the peer showed, completed from the trust store; every
 * link is checked here by signature (names alone can be forged), and the CA it ends at decides.
 */
export function judgeNodeCertificate(tls: TLSSocket, trust: NodeTrust): TrustVerdict {
  if (!tls.authorized) return { ok: false, why: `not trusted (${String(tls.authorizationError ?? 'no chain')})` };
  const leaf = tls.getPeerCertificate(true);
  if (!leaf || Object.keys(leaf).length === 0) return { ok: false, why: 'no certificate' };
  const chain = verifiedChain(leaf);
  if (!chain) return { ok: false, why: 'its chain does not hold together (a signature or a validity date fails)' };
  const anchors = anchorsOf(trust);
  const top = chain.at(-1)!;
  const sameAs = (list: X509Certificate[]): X509Certificate | undefined =>
    list.find((a) => chain.some((c) => c.fingerprint256 === a.fingerprint256 || c.publicKey.equals(a.publicKey)));
  const extra = trust.profileChecks ? profileCertificateProblem(leaf, trust.profileChecks) : null;
  if (extra) return { ok: false, why: extra };
  const priv = sameAs(anchors.private);
  // A private CA from a row in clear vouches for nothing by itself; a public CA or the user's own
  // (tunnel.nodeCa) may still vouch for the same chain, under the node's name, below.
  const privInClear = priv && trust.serverName !== null && trust.profileCaInClear ? priv : null;
  if (priv && !privInClear)
    return trust.serverName === null
      ? { ok: true, rule: 'own-profile', detail: `chains to ${subjectName(priv)} (the profile’s <ca>)` }
      : { ok: true, rule: 'private-ca', detail: `chains to ${subjectName(priv)}, the node’s own CA` };
  const ownPublic = sameAs(anchors.ownPublic);
  if (ownPublic) {
    if (!trust.profileChecks?.verifyX509Name)
      return {
        ok: false,
        why: `your profile's <ca> is the public CA ${subjectName(ownPublic)}, which vouches for anyone's certificate, and the profile names no server to check it against: add "verify-x509-name <the server's name> name" to the profile, or give its DDNS name (…opengw.net) as the remote`,
      };
    return {
      ok: true,
      rule: 'own-profile',
      detail: `chains to ${subjectName(ownPublic)} (the profile’s <ca>), for the name its verify-x509-name gives`,
    };
  }
  const pub = sameAs(anchors.public);
  const root = publicRoots().rootOf(top);
  const issuer = pub ? subjectName(pub) : root ? root.name : null;
  if (!issuer && privInClear)
    return {
      ok: false,
      why: `it chains to ${subjectName(privInClear)}, a private CA that only a node list fetched without HTTPS names, and anyone on that list's way could have written it: Gatehop trusts a node's own CA only from a list fetched over HTTPS or a file you imported`,
    };
  if (!issuer) return { ok: false, why: `it chains to ${subjectName(top)}, which nobody named` };
  if (trust.serverName === null)
    return { ok: false, why: `it chains to the public CA ${issuer} and the node has no name to check it against` };
  const mismatch = checkServerIdentity(trust.serverName, leaf);
  if (mismatch)
    return {
      ok: false,
      why: `a public CA (${issuer}) issued it for ${namesOf(leaf)}, not for ${trust.serverName}`,
    };
  return { ok: true, rule: 'public-ca-name', detail: `${issuer} vouches for it as ${trust.serverName}` };
}

/**
 * The leaf and its issuers as X509Certificates, each link checked by signature and every
 * certificate within its dates, the CAs above the leaf marked as CAs; null when any of that fails.
 */
function verifiedChain(leaf: DetailedPeerCertificate): X509Certificate[] | null {
  const out: X509Certificate[] = [];
  let c: DetailedPeerCertificate = leaf;
  for (let depth = 0; depth < 16; depth++) {
    const x = new X509Certificate(c.raw);
    const now = Date.now();
    if (now < Date.parse(x.validFrom) || now > Date.parse(x.validTo)) return null;
    if (depth > 0) {
      const child = out.at(-1)!;
      if (!x.ca || !child.checkIssued(x) || !child.verify(x.publicKey)) return null;
    }
    out.push(x);
    const next = c.issuerCertificate;
    if (!next || next === c || next.fingerprint256 === c.fingerprint256) break;
    c = next;
  }
  return out;
}

/** The names a certificate is for, short, for an error. */
function namesOf(cert: DetailedPeerCertificate): string {
  const san = (cert.subjectaltname ?? '')
    .split(/,\s*/)
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4));
  const names = san.length > 0 ? san : typeof cert.subject?.CN === 'string' ? [cert.subject.CN] : [];
  return names.length === 0 ? 'no name' : names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
}

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

/** OpenVPN's subject string: "C=JP, O=Example, CN=server" in the certificate's order. */
function subjectString(cert: PeerCertificate): string {
  return Object.entries(cert.subject ?? {})
    .flatMap(([k, v]) => (Array.isArray(v) ? v.map((x: string) => `${k}=${x}`) : [`${k}=${String(v)}`]))
    .join(', ');
}

/**
 * The checks OpenVPN makes beyond the chain, as it makes them: `remote-cert-tls server` (extended
 * key usage serverAuth) and `verify-x509-name` (a literal match on the CN or subject, no SAN, no
 * wildcard). Returns why the certificate is refused, or null.
 */
export function profileCertificateProblem(cert: PeerCertificate, checks: ProfileCertChecks): string | null {
  if (checks.remoteCertTls === 'server' && !(cert.ext_key_usage ?? []).includes(SERVER_AUTH)) {
    return 'remote-cert-tls server: the certificate has no TLS Web Server Authentication key usage';
  }
  const v = checks.verifyX509Name;
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
