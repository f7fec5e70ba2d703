/*
 * The few libcrypto (OpenSSL 1.1/3.x) functions the data channel needs, found at run time.
 *
 * Why not link it: Node links OpenSSL into its executable and exports its symbols, so in Node the
 * functions are already in the process (and a second, system copy would be a second library with
 * its own state). Electron links BoringSSL and exports nothing (electron/electron#13176), so there
 * the system's libcrypto is opened instead. Either way the build needs no OpenSSL headers and no
 * -lcrypto: only these prototypes, which have been stable since OpenSSL 1.1.
 */
#ifndef GATEHOP_LIBCRYPTO_H
#define GATEHOP_LIBCRYPTO_H

#include <stddef.h>

typedef struct evp_cipher_st EVP_CIPHER;
typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;
typedef struct evp_md_st EVP_MD;
typedef struct hmac_ctx_st HMAC_CTX;
typedef struct engine_st ENGINE;

/* EVP_CTRL_AEAD_* (= EVP_CTRL_GCM_*), the same values in OpenSSL 1.1, 3.x and BoringSSL. */
#define GH_CTRL_AEAD_SET_IVLEN 0x9
#define GH_CTRL_AEAD_GET_TAG 0x10
#define GH_CTRL_AEAD_SET_TAG 0x11

typedef struct {
  EVP_CIPHER_CTX *(*EVP_CIPHER_CTX_new)(void);
  void (*EVP_CIPHER_CTX_free)(EVP_CIPHER_CTX *);
  int (*EVP_CIPHER_CTX_ctrl)(EVP_CIPHER_CTX *, int, int, void *);
  int (*EVP_CIPHER_CTX_set_padding)(EVP_CIPHER_CTX *, int);
  const EVP_CIPHER *(*EVP_get_cipherbyname)(const char *);
  const EVP_MD *(*EVP_get_digestbyname)(const char *);
  int (*EVP_CipherInit_ex)(EVP_CIPHER_CTX *, const EVP_CIPHER *, ENGINE *, const unsigned char *, const unsigned char *, int);
  int (*EVP_CipherUpdate)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int);
  int (*EVP_CipherFinal_ex)(EVP_CIPHER_CTX *, unsigned char *, int *);
  HMAC_CTX *(*HMAC_CTX_new)(void);
  void (*HMAC_CTX_free)(HMAC_CTX *);
  int (*HMAC_Init_ex)(HMAC_CTX *, const void *, int, const EVP_MD *, ENGINE *);
  int (*HMAC_Update)(HMAC_CTX *, const unsigned char *, size_t);
  int (*HMAC_Final)(HMAC_CTX *, unsigned char *, unsigned int *);
  int (*RAND_bytes)(unsigned char *, int);
  int (*CRYPTO_memcmp)(const void *, const void *, size_t);
  const char *(*OpenSSL_version)(int);
} gh_libcrypto;

/*
 * The functions, resolved once per process; NULL when no libcrypto was found, with *why saying
 * what was tried. *where says whose they are ("the process" or the library's file name).
 */
const gh_libcrypto *gh_libcrypto_get(const char **why, const char **where);

#endif
