import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A CA made by Debian's openssl for a test: its certificate, and what it can issue. */
export interface TestCa {
  /** The CA's certificate (PEM). */
  cert: string;
  /** Where its certificate is (PEM file): for NODE_EXTRA_CA_CERTS, the rig, a config's nodeCa. */
  certFile: string;
  /** A server certificate for `names` (SAN DNS entries, the first also the CN), with its key and the chain above it. */
  /** A leaf for `names` (DNS names; `IP:a.b.c.d` for an address). */
  issue(names: string[], opts?: { days?: number }): IssuedCert;
  /** A CA below this one (an intermediate), issuing in turn. */
  intermediate(name: string): TestCa;
}

export interface IssuedCert {
  cert: string;
  key: string;
  /** The certificate followed by the intermediates up to (not including) the root: what a server sends. */
  chain: string;
  certFile: string;
  keyFile: string;
}

/** A throwaway root CA named `name` (RSA 2048, valid two days). */
export function testRootCa(name: string): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'gh-ca-'));
  run(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  ]);
  return caIn(dir, null);
}

/** A CA whose files are in `dir`; `parentChain` is null for a root, else the intermediates above it. */
function caIn(dir: string, parentChain: string | null): TestCa {
  const cert = readFileSync(join(dir, 'ca.crt'), 'utf8');
  // What a server sends above its leaf: this CA and those above it, never the root.
  const above = parentChain === null ? '' : cert + parentChain;
  let n = 0;
  return {
    cert,
    certFile: join(dir, 'ca.crt'),
    issue(names, opts = {}) {
      const id = `leaf${n++}`;
      newKeyAndCsr(dir, id, names[0]!);
      writeFileSync(
        join(dir, `${id}.ext`),
        `subjectAltName=${names.map((x) => (x.startsWith('IP:') ? x : `DNS:${x}`)).join(',')}\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\nbasicConstraints=CA:FALSE\n`,
      );
      signCsr(dir, id, opts.days ?? 2);
      const leaf = readFileSync(join(dir, `${id}.crt`), 'utf8');
      const chain = leaf + above;
      writeFileSync(join(dir, `${id}.chain`), chain);
      return {
        cert: leaf,
        key: readFileSync(join(dir, `${id}.key`), 'utf8'),
        chain,
        certFile: join(dir, `${id}.chain`),
        keyFile: join(dir, `${id}.key`),
      };
    },
    intermediate(name) {
      const sub = mkdtempSync(join(tmpdir(), 'gh-ica-'));
      const id = `ica${n++}`;
      newKeyAndCsr(dir, id, name);
      writeFileSync(
        join(dir, `${id}.ext`),
        'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n',
      );
      signCsr(dir, id, 2);
      writeFileSync(join(sub, 'ca.crt'), readFileSync(join(dir, `${id}.crt`)));
      writeFileSync(join(sub, 'ca.key'), readFileSync(join(dir, `${id}.key`)));
      return caIn(sub, above);
    },
  };
}

/** A new RSA key (`id`.key) and a request for `commonName` (`id`.csr) in `dir`. */
function newKeyAndCsr(dir: string, id: string, commonName: string): void {
  run(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    `/CN=${commonName}`,
    '-keyout',
    `${id}.key`,
    '-out',
    `${id}.csr`,
  ]);
}

function signCsr(dir: string, id: string, days: number): void {
  run(dir, [
    'x509',
    '-req',
    '-in',
    `${id}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    String(days),
    '-extfile',
    `${id}.ext`,
    '-out',
    `${id}.crt`,
  ]);
}

function run(cwd: string, args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/**
 * Installs `ca` as a "public" root for this process the way Node documents adding roots
 * (NODE_EXTRA_CA_CERTS, which core/reach/public-roots reads); returns a function that puts the
 * environment back.
 */
export function installPublicRoot(ca: { certFile: string }): () => void {
  const before = process.env.NODE_EXTRA_CA_CERTS;
  process.env.NODE_EXTRA_CA_CERTS = ca.certFile;
  return () => {
    if (before === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = before;
  };
}
