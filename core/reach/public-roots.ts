import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';

/**
 * The publicly trusted roots, "the OS roots" of the node trust rule and of the honesty checks:
 * the Mozilla roots Node ships (what browsers and most OSes trust), the system's bundle where the
 * OS keeps one in a file (`SSL_CERT_FILE`, as OpenSSL reads it, else Debian's and Fedora's paths),
 * and the roots named by `NODE_EXTRA_CA_CERTS` (Node's documented way to add roots to a process,
 * which is also how a test installs a "public" test root). Any CA here signs certificates for
 * anyone who proves a domain: it may vouch for a node only under that node's own name.
 */
export interface PublicRoots {
  /** Every root as PEM, for tls.connect's `ca`. */
  readonly pems: readonly string[];
  /** Whether `pem` is one of these roots, a copy of one with the same key, or issued by one. */
  vouchesFor(pem: string): PublicRootMatch | null;
  /** The root `cert` is (by fingerprint or key), or null. */
  rootOf(cert: X509Certificate): PublicRootMatch | null;
}

export interface PublicRootMatch {
  /** The root's subject CN or O, for logs and /status ("ISRG Root X1"). */
  name: string;
  how: 'is a public root' | 'has a public root’s key' | 'is issued by a public root';
}

const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt'];
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

let cached: { key: string; roots: PublicRoots } | null = null;

/** The public roots now; read once per process (again if the environment names other files). */
export function publicRoots(): PublicRoots {
  const extra = process.env.NODE_EXTRA_CA_CERTS ?? '';
  const system = process.env.SSL_CERT_FILE ?? '';
  const key = `${extra}\0${system}`;
  if (cached?.key !== key) cached = { key, roots: buildRoots(extra, system) };
  return cached.roots;
}

/** The PEM certificates in `text` (a bundle, a profile's `<ca>`); anything else in it is ignored. */
export function pemCertificates(text: string): string[] {
  return text.match(PEM_BLOCK) ?? [];
}

/**
 * A PEM certificate's body: its base64 without the armour and white space. Two PEMs of the same
 * certificate, wrapped or spaced differently, have the same body (text only, no parse).
 */
export function pemBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, '');
}

/** SHA-256 of the certificate's public key (SubjectPublicKeyInfo, DER). */
export function spkiSha256(cert: X509Certificate): string {
  return createHash('sha256')
    .update(cert.publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex');
}

/** The certificate, or null when it does not parse (a hostile or broken `<ca>`). */
export function parseCertificate(pem: string): X509Certificate | null {
  try {
    return new X509Certificate(pem);
  } catch {
    return null;
  }
}

export function subjectName(cert: X509Certificate): string {
  const field = (k: string): string | undefined =>
    cert.subject
      .split('\n')
      .find((l) => l.startsWith(`${k}=`))
      ?.slice(k.length + 1);
  return field('CN') ?? field('O') ?? cert.subject.replace(/\n/g, ', ');
}

function readBundle(path: string): string[] {
  if (!path) return [];
  try {
    return pemCertificates(readFileSync(path, 'utf8'));
  } catch {
    return [];
  }
}

function buildRoots(extraPath: string, systemPath: string): PublicRoots {
  const system = systemPath
    ? readBundle(systemPath)
    : (SYSTEM_BUNDLES.map((p) => readBundle(p)).find((b) => b.length > 0) ?? []);
  // One entry per certificate: the OS bundle repeats Node's roots in its own line breaks.
  const roots = new Map<string, { pem: string; cert: X509Certificate; spki: string; name: string }>();
  for (const pem of [...rootCertificates, ...system.slice(0, 2000), ...readBundle(extraPath)]) {
    const cert = parseCertificate(pem);
    if (cert && !roots.has(cert.fingerprint256))
      roots.set(cert.fingerprint256, { pem, cert, spki: spkiSha256(cert), name: subjectName(cert) });
  }
  const all = [...roots.values()];
  const bySpki = new Map(all.map((r) => [r.spki, r.name]));
  const rootOf = (cert: X509Certificate): PublicRootMatch | null => {
    const same = roots.get(cert.fingerprint256);
    if (same) return { name: same.name, how: 'is a public root' };
    const key = bySpki.get(spkiSha256(cert));
    return key ? { name: key, how: 'has a public root’s key' } : null;
  };
  return {
    pems: all.map((r) => r.pem),
    rootOf,
    vouchesFor(pem: string): PublicRootMatch | null {
      const cert = parseCertificate(pem);
      if (!cert) return null;
      const root = rootOf(cert);
      if (root) return root;
      // An intermediate of a public CA (Sectigo's, in 2020's profiles) is as public as its root.
      for (const r of all)
        if (cert.checkIssued(r.cert) && cert.verify(r.cert.publicKey))
          return { name: r.name, how: 'is issued by a public root' };
      return null;
    },
  };
}
