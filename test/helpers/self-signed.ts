import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
  const dir = mkdtempSync(join(tmpdir(), 'gh-pki-'));
  const run = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${caName}`,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${serverName}`, '-keyout', 'node.key', '-out', 'node.csr');
  writeFileSync(join(dir, 'node.ext'), `subjectAltName=DNS:${serverName}\nextendedKeyUsage=serverAuth\n`);
  run(
    'x509',
    '-req',
    '-in',
    'node.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'node.ext',
    '-out',
    'node.crt',
  );
  return {
    ca: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    key: readFileSync(join(dir, 'node.key'), 'utf8'),
    cert: readFileSync(join(dir, 'node.crt'), 'utf8'),
  };
}
