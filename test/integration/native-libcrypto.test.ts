/**
 * Where gatehop-native finds libcrypto. In Node the functions are in the process (Node links
 * OpenSSL and exports it); in Electron they are not (BoringSSL, nothing exported), and the module
 * opens the system's libcrypto instead. Electron's binary is not here, so the second case runs in
 * the closest real stand-in: a C program built from the module's own libcrypto.c, which exports
 * no OpenSSL either, encrypting with what it found.
 */
import { execFileSync } from 'node:child_process';
import { createCipheriv } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataEngineStatus, loadNative } from '../../core/common/index.js';

const ROOT = resolve(__dirname, '../..');
const native = loadNative();

const HOST = `
#include <stdio.h>
#include "libcrypto.h"
int main(void) {
  const char *why, *where;
  const gh_libcrypto *c = gh_libcrypto_get(&why, &where);
  if (!c) { printf("none: %s\\n", why); return 1; }
  unsigned char key[16] = {0}, iv[16] = {0}, in[16] = "gatehop-native!", out[32];
  int l1 = 0, l2 = 0;
  EVP_CIPHER_CTX *ctx = c->EVP_CIPHER_CTX_new();
  c->EVP_CipherInit_ex(ctx, c->EVP_get_cipherbyname("aes-128-cbc"), NULL, key, iv, 1);
  c->EVP_CipherUpdate(ctx, out, &l1, in, 16);
  c->EVP_CipherFinal_ex(ctx, out + l1, &l2);
  c->EVP_CIPHER_CTX_free(ctx);
  printf("%s|%s|", where, c->OpenSSL_version(0));
  for (int i = 0; i < l1 + l2; i++) printf("%02x", out[i]);
  printf("\\n");
  return 0;
}
`;

describe('gatehop-native: libcrypto', () => {
  it.skipIf(!native)("in Node: the process's own OpenSSL, and the data path runs natively", () => {
    expect(native!.cryptoStatus()).toMatchObject({
      library: 'the process',
      version: expect.stringMatching(/^OpenSSL 3\./),
    });
    expect(dataEngineStatus()).toMatchObject({
      engine: 'native',
      reason: null,
      library: expect.stringContaining('the process'),
    });
  });

  it.runIf(process.platform === 'linux')(
    "in a process without OpenSSL of its own (as Electron): the system's libcrypto.so.3, with the same answers as Node",
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'gh-libcrypto-'));
      writeFileSync(join(dir, 'host.c'), HOST);
      const exe = join(dir, 'host');
      execFileSync('cc', [
        '-std=gnu11',
        '-Wall',
        '-o',
        exe,
        '-I',
        join(ROOT, 'native/src'),
        join(dir, 'host.c'),
        join(ROOT, 'native/src/libcrypto.c'),
        '-ldl',
        '-lpthread',
      ]);
      expect(execFileSync('nm', ['-D', '--defined-only', exe], { encoding: 'utf8' })).not.toMatch(/EVP_/);
      const [where, version, hex] = execFileSync(exe, { encoding: 'utf8' }).trim().split('|');
      expect(where).toBe('libcrypto.so.3');
      expect(version).toMatch(/^OpenSSL 3\./);
      const c = createCipheriv('aes-128-cbc', Buffer.alloc(16), Buffer.alloc(16));
      const want = Buffer.concat([c.update(Buffer.from('gatehop-native!\0')), c.final()]).toString('hex');
      expect(hex).toBe(want);
    },
  );
});
