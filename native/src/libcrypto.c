/* Finds libcrypto's functions at run time: in the process first (Node's own), else a system copy. */
#include "libcrypto.h"

#include <stdio.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#include <pthread.h>
#define GH_HAVE_DLOPEN 1
#endif

static gh_libcrypto table;
static const gh_libcrypto *resolved;
static char reason[256] = "libcrypto not looked for";
static const char *origin = "";

#ifdef GH_HAVE_DLOPEN
#define FN(name) {#name, (void **)&table.name}
static struct {
  const char *name;
  void **slot;
} const functions[] = {
    FN(EVP_CIPHER_CTX_new), FN(EVP_CIPHER_CTX_free), FN(EVP_CIPHER_CTX_ctrl), FN(EVP_CIPHER_CTX_set_padding),
    FN(EVP_get_cipherbyname), FN(EVP_get_digestbyname), FN(EVP_CipherInit_ex), FN(EVP_CipherUpdate),
    FN(EVP_CipherFinal_ex), FN(HMAC_CTX_new), FN(HMAC_CTX_free), FN(HMAC_Init_ex), FN(HMAC_Update),
    FN(HMAC_Final), FN(RAND_bytes), FN(CRYPTO_memcmp), FN(OpenSSL_version),
};
#undef FN

/* Fills the table from one handle; the name of the first missing function, or NULL. */
static const char *fill(void *handle) {
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
    void *fn = dlsym(handle, functions[i].name);
    if (!fn) return functions[i].name;
    /* dlsym returns data pointers; POSIX guarantees they convert to function pointers. */
    memcpy(functions[i].slot, &fn, sizeof fn);
  }
  return NULL;
}

static const char *const libraries[] = {
#if defined(__APPLE__)
    "libcrypto.3.dylib", "/opt/homebrew/opt/openssl@3/lib/libcrypto.3.dylib", "/usr/local/opt/openssl@3/lib/libcrypto.3.dylib",
#else
    "libcrypto.so.3", "libcrypto.so.1.1",
#endif
};

static void resolve_once(void) {
  const char *missing = fill(RTLD_DEFAULT);
  if (!missing) {
    resolved = &table;
    origin = "the process";
    return;
  }
  int at = snprintf(reason, sizeof reason, "not in the process (%s)", missing);
  for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++) {
    void *handle = dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      if (at > 0 && (size_t)at < sizeof reason) at += snprintf(reason + at, sizeof reason - at, "; no %s", libraries[i]);
      continue;
    }
    missing = fill(handle);
    if (!missing) {
      resolved = &table;
      origin = libraries[i];
      return;
    }
    if (at > 0 && (size_t)at < sizeof reason) at += snprintf(reason + at, sizeof reason - at, "; %s lacks %s", libraries[i], missing);
    dlclose(handle);
  }
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
#endif

const gh_libcrypto *gh_libcrypto_get(const char **why, const char **where) {
#ifdef GH_HAVE_DLOPEN
  /* Worker threads load the module too: resolve exactly once per process. */
  pthread_once(&once, resolve_once);
#else
  snprintf(reason, sizeof reason, "no dlopen on this platform");
#endif
  if (why) *why = reason;
  if (where) *where = origin;
  return resolved;
}
