import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testRootCa } from './pki.js';

/** A throwaway self-signed certificate and its key (PEM) for a test's TLS server, by Debian's openssl. */
export function selfSignedCert(commonName: string): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gh-cert-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${commonName}`].concat([
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]),
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
}

/** A throwaway CA and a server certificate it signed for `serverName` (PEM), by Debian's openssl. */
export function caSignedCert(caName: string, serverName: string): { ca: string; key: string; cert: string } {
  const ca = testRootCa(caName);
  const leaf = ca.issue([serverName]);
  return { ca: ca.cert, key: leaf.key, cert: leaf.cert };
}
