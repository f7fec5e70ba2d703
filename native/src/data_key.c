/*
 * The OpenVPN data channel's per-packet work (notes §6) with cipher and HMAC contexts keyed once
 * per key, not once per packet as Node's crypto API must (createCipheriv per packet was a tenth of
 * the tunnel's CPU, its garbage more). Packets move in batches: one call seals every IP packet a
 * turn of the event loop produced into one buffer (TCP records framed, ready for one write or one
 * sendmmsg); one call authenticates and decrypts every packet a read brought, in place.
 *
 * Wire formats, the same as core/ovpn/data-channel.ts (its JavaScript twin, the fallback):
 *   CBC:  header | HMAC(iv ‖ ct) | iv | ct = CBC(packet id ‖ payload, PKCS#7)
 *   AEAD: header | packet id | tag | ct,  nonce = packet id ‖ implicit IV,
 *         AAD = header ‖ packet id for P_DATA_V2, packet id alone for P_DATA_V1
 * header: P_DATA_V1 (1 byte) or P_DATA_V2 (4 bytes, with the pushed peer-id).
 */
#include "data_key.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libcrypto.h"

#define OP_DATA_V1 6
#define OP_DATA_V2 9
#define TAG_LEN 16
#define CBC_BLOCK 16
#define IV_POOL 4096
#define MAX_MAC 64

/* Results of dataOpen for a packet that is dropped (a length of 0 or more is a payload). */
#define OPEN_FAILED (-1)
#define OPEN_REPLAY (-2)

typedef struct {
  const gh_libcrypto *c;
  int aead;
  int key_id;
  int32_t peer_id; /* -1: P_DATA_V1 */
  EVP_CIPHER_CTX *enc;
  EVP_CIPHER_CTX *dec;
  HMAC_CTX *enc_mac;
  HMAC_CTX *dec_mac;
  unsigned mac_len;
  unsigned char enc_iv[8];
  unsigned char dec_iv[8];
  uint32_t send_id;
  uint32_t max_seen;
  uint64_t window; /* bit i: id max_seen - i was seen */
  /* Random CBC IVs, one RAND_bytes call per 256 packets. */
  unsigned char iv_pool[IV_POOL];
  unsigned iv_at;
} data_key;

static void put_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void key_free(data_key *k) {
  if (!k) return;
  if (k->enc) k->c->EVP_CIPHER_CTX_free(k->enc);
  if (k->dec) k->c->EVP_CIPHER_CTX_free(k->dec);
  if (k->enc_mac) k->c->HMAC_CTX_free(k->enc_mac);
  if (k->dec_mac) k->c->HMAC_CTX_free(k->dec_mac);
  /* The keys live inside OpenSSL's contexts, which clear them on free; ours are the implicit IVs. */
  memset(k, 0, sizeof *k);
  free(k);
}

static void key_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  key_free(data);
}

static napi_value throw_error(napi_env env, const char *code, const char *msg) {
  napi_throw_error(env, code, msg);
  return NULL;
}

/* ---- argument helpers: each returns 0 on success, having thrown otherwise ---- */

static int get_buffer(napi_env env, napi_value v, unsigned char **data, size_t *len, const char *what) {
  bool is;
  if (napi_is_buffer(env, v, &is) != napi_ok || !is) {
    /* A Uint8Array that is not a Buffer is just as good. */
    napi_typedarray_type type;
    size_t length, offset;
    void *ptr;
    napi_value ab;
    if (napi_is_typedarray(env, v, &is) == napi_ok && is &&
        napi_get_typedarray_info(env, v, &type, &length, &ptr, &ab, &offset) == napi_ok && type == napi_uint8_array) {
      *data = ptr;
      *len = length;
      return 0;
    }
    char msg[96];
    snprintf(msg, sizeof msg, "%s must be a Buffer", what);
    napi_throw_type_error(env, "GATEHOP_NATIVE_ARGUMENT", msg);
    return -1;
  }
  void *ptr;
  if (napi_get_buffer_info(env, v, &ptr, len) != napi_ok) return -1;
  *data = ptr;
  return 0;
}

static int get_typed(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *count, const char *what) {
  bool is;
  napi_typedarray_type type;
  size_t offset;
  napi_value ab;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is || napi_get_typedarray_info(env, v, &type, count, data, &ab, &offset) != napi_ok || type != want) {
    char msg[96];
    snprintf(msg, sizeof msg, "%s has the wrong type", what);
    napi_throw_type_error(env, "GATEHOP_NATIVE_ARGUMENT", msg);
    return -1;
  }
  return 0;
}

static int get_key(napi_env env, napi_value v, data_key **k) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external || napi_get_value_external(env, v, (void **)k) != napi_ok || !*k) {
    napi_throw_type_error(env, "GATEHOP_NATIVE_ARGUMENT", "not a data key");
    return -1;
  }
  return 0;
}

static int get_named_buffer(napi_env env, napi_value obj, const char *name, unsigned char **data, size_t *len) {
  napi_value v;
  if (napi_get_named_property(env, obj, name, &v) != napi_ok) return -1;
  return get_buffer(env, v, data, len, name);
}

static int get_named_string(napi_env env, napi_value obj, const char *name, char *out, size_t cap) {
  napi_value v;
  napi_valuetype t;
  size_t len;
  if (napi_get_named_property(env, obj, name, &v) != napi_ok || napi_typeof(env, v, &t) != napi_ok) return -1;
  if (t == napi_null || t == napi_undefined) {
    out[0] = 0;
    return 0;
  }
  if (t != napi_string || napi_get_value_string_utf8(env, v, out, cap, &len) != napi_ok) {
    napi_throw_type_error(env, "GATEHOP_NATIVE_ARGUMENT", name);
    return -1;
  }
  return 0;
}

static int get_named_int(napi_env env, napi_value obj, const char *name, int32_t *out) {
  napi_value v;
  if (napi_get_named_property(env, obj, name, &v) != napi_ok || napi_get_value_int32(env, v, out) != napi_ok) {
    napi_throw_type_error(env, "GATEHOP_NATIVE_ARGUMENT", name);
    return -1;
  }
  return 0;
}

/* ---- cryptoStatus ---- */

napi_value gh_crypto_status(napi_env env, napi_callback_info info) {
  (void)info;
  const char *why, *where;
  const gh_libcrypto *c = gh_libcrypto_get(&why, &where);
  napi_value out, s;
  napi_create_object(env, &out);
  if (c) {
    napi_create_string_utf8(env, where, NAPI_AUTO_LENGTH, &s);
    napi_set_named_property(env, out, "library", s);
    napi_create_string_utf8(env, c->OpenSSL_version(0), NAPI_AUTO_LENGTH, &s);
    napi_set_named_property(env, out, "version", s);
  } else {
    napi_create_string_utf8(env, why, NAPI_AUTO_LENGTH, &s);
    napi_set_named_property(env, out, "reason", s);
  }
  return out;
}

/* ---- dataKeyOpen({ cipher, digest, keyId, peerId, encKey, decKey, encHmac, decHmac, encIv, decIv }) ---- */

napi_value gh_data_key_open(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value spec;
  if (napi_get_cb_info(env, info, &argc, &spec, NULL, NULL) != napi_ok || argc < 1) return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "dataKeyOpen(spec)");
  const char *why;
  const gh_libcrypto *c = gh_libcrypto_get(&why, NULL);
  if (!c) return throw_error(env, "GATEHOP_NATIVE_CRYPTO", why);

  char cipher_name[32], digest_name[32];
  int32_t key_id, peer_id;
  unsigned char *enc_key, *dec_key, *enc_mac, *dec_mac, *enc_iv, *dec_iv;
  size_t enc_key_len, dec_key_len, enc_mac_len, dec_mac_len, enc_iv_len, dec_iv_len;
  if (get_named_string(env, spec, "cipher", cipher_name, sizeof cipher_name) || get_named_string(env, spec, "digest", digest_name, sizeof digest_name) ||
      get_named_int(env, spec, "keyId", &key_id) || get_named_int(env, spec, "peerId", &peer_id) ||
      get_named_buffer(env, spec, "encKey", &enc_key, &enc_key_len) || get_named_buffer(env, spec, "decKey", &dec_key, &dec_key_len) ||
      get_named_buffer(env, spec, "encHmac", &enc_mac, &enc_mac_len) || get_named_buffer(env, spec, "decHmac", &dec_mac, &dec_mac_len) ||
      get_named_buffer(env, spec, "encIv", &enc_iv, &enc_iv_len) || get_named_buffer(env, spec, "decIv", &dec_iv, &dec_iv_len))
    return NULL;

  const EVP_CIPHER *cipher = c->EVP_get_cipherbyname(cipher_name);
  if (!cipher) return throw_error(env, "GATEHOP_NATIVE_CRYPTO", "this libcrypto has no such cipher");
  int aead = strstr(cipher_name, "gcm") != NULL || strstr(cipher_name, "poly1305") != NULL;
  const EVP_MD *md = NULL;
  if (!aead) {
    md = c->EVP_get_digestbyname(digest_name);
    if (!md) return throw_error(env, "GATEHOP_NATIVE_CRYPTO", "this libcrypto has no such digest");
    if (enc_mac_len > MAX_MAC || dec_mac_len > MAX_MAC || enc_mac_len != dec_mac_len) return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "HMAC keys");
  }
  if (key_id < 0 || key_id > 7 || enc_iv_len != 8 || dec_iv_len != 8) return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "keyId or implicit IVs");

  data_key *k = calloc(1, sizeof *k);
  if (!k) return throw_error(env, "GATEHOP_NATIVE_MEMORY", "out of memory");
  k->c = c;
  k->aead = aead;
  k->key_id = key_id;
  k->peer_id = peer_id;
  k->mac_len = aead ? 0 : (unsigned)enc_mac_len;
  k->iv_at = IV_POOL;
  memcpy(k->enc_iv, enc_iv, 8);
  memcpy(k->dec_iv, dec_iv, 8);
  k->enc = c->EVP_CIPHER_CTX_new();
  k->dec = c->EVP_CIPHER_CTX_new();
  int ok = k->enc && k->dec && c->EVP_CipherInit_ex(k->enc, cipher, NULL, enc_key, NULL, 1) == 1 &&
           c->EVP_CipherInit_ex(k->dec, cipher, NULL, dec_key, NULL, 0) == 1;
  if (ok && !aead) {
    k->enc_mac = c->HMAC_CTX_new();
    k->dec_mac = c->HMAC_CTX_new();
    ok = k->enc_mac && k->dec_mac && c->HMAC_Init_ex(k->enc_mac, enc_mac, (int)enc_mac_len, md, NULL) == 1 &&
         c->HMAC_Init_ex(k->dec_mac, dec_mac, (int)dec_mac_len, md, NULL) == 1;
  }
  (void)enc_key_len;
  (void)dec_key_len;
  if (!ok) {
    key_free(k);
    return throw_error(env, "GATEHOP_NATIVE_CRYPTO", "could not key the cipher or HMAC");
  }
  napi_value handle;
  if (napi_create_external(env, k, key_finalize, NULL, &handle) != napi_ok) {
    key_free(k);
    return NULL;
  }
  return handle;
}

/* ---- sealing ---- */

static size_t header(const data_key *k, unsigned char *p) {
  if (k->peer_id < 0) {
    p[0] = (unsigned char)((OP_DATA_V1 << 3) | k->key_id);
    return 1;
  }
  put_be32(p, ((uint32_t)((OP_DATA_V2 << 3) | k->key_id) << 24) | ((uint32_t)k->peer_id & 0xffffff));
  return 4;
}

/* Seals one payload at out; its length, or 0 when the cipher failed. */
static size_t seal_one(data_key *k, const unsigned char *payload, size_t len, unsigned char *out) {
  const gh_libcrypto *c = k->c;
  size_t head = header(k, out);
  unsigned char pid[4];
  put_be32(pid, ++k->send_id);
  int l1 = 0, l2 = 0, l3 = 0;
  if (k->aead) {
    unsigned char nonce[12];
    memcpy(nonce, pid, 4);
    memcpy(nonce + 4, k->enc_iv, 8);
    memcpy(out + head, pid, 4);
    unsigned char *tag = out + head + 4, *ct = tag + TAG_LEN;
    int aad_len = 0;
    if (c->EVP_CipherInit_ex(k->enc, NULL, NULL, NULL, nonce, 1) != 1) return 0;
    /* The AAD: the header and packet id for V2 (they are contiguous at out), the id alone for V1. */
    const unsigned char *aad = k->peer_id < 0 ? out + head : out;
    if (c->EVP_CipherUpdate(k->enc, NULL, &aad_len, aad, k->peer_id < 0 ? 4 : (int)head + 4) != 1) return 0;
    if (c->EVP_CipherUpdate(k->enc, ct, &l1, payload, (int)len) != 1) return 0;
    if (c->EVP_CipherFinal_ex(k->enc, ct + l1, &l2) != 1) return 0;
    if (c->EVP_CIPHER_CTX_ctrl(k->enc, GH_CTRL_AEAD_GET_TAG, TAG_LEN, tag) != 1) return 0;
    return head + 4 + TAG_LEN + (size_t)l1 + (size_t)l2;
  }
  unsigned char *mac = out + head, *iv = mac + k->mac_len, *ct = iv + CBC_BLOCK;
  if (k->iv_at + CBC_BLOCK > IV_POOL) {
    if (c->RAND_bytes(k->iv_pool, IV_POOL) != 1) return 0;
    k->iv_at = 0;
  }
  memcpy(iv, k->iv_pool + k->iv_at, CBC_BLOCK);
  k->iv_at += CBC_BLOCK;
  if (c->EVP_CipherInit_ex(k->enc, NULL, NULL, NULL, iv, 1) != 1) return 0;
  if (c->EVP_CipherUpdate(k->enc, ct, &l1, pid, 4) != 1) return 0;
  if (c->EVP_CipherUpdate(k->enc, ct + l1, &l2, payload, (int)len) != 1) return 0;
  if (c->EVP_CipherFinal_ex(k->enc, ct + l1 + l2, &l3) != 1) return 0;
  size_t ct_len = (size_t)l1 + (size_t)l2 + (size_t)l3;
  unsigned int mac_len = 0;
  if (c->HMAC_Init_ex(k->enc_mac, NULL, 0, NULL, NULL) != 1 || c->HMAC_Update(k->enc_mac, iv, CBC_BLOCK + ct_len) != 1 ||
      c->HMAC_Final(k->enc_mac, mac, &mac_len) != 1 || mac_len != k->mac_len)
    return 0;
  return head + k->mac_len + CBC_BLOCK + ct_len;
}

/* The most a sealed packet adds to its payload: V2 header, a SHA-512 HMAC, IV, id, a padding block. */
#define SEAL_OVERHEAD (4 + MAX_MAC + CBC_BLOCK + 4 + CBC_BLOCK)

napi_value gh_data_seal(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5) return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "dataSeal(key, payloads, out, lengths, tcpFraming)");
  data_key *k;
  unsigned char *out;
  size_t out_len, n_lengths;
  uint32_t *lengths;
  uint32_t count;
  bool framed;
  if (get_key(env, argv[0], &k) || get_buffer(env, argv[2], &out, &out_len, "out") ||
      get_typed(env, argv[3], napi_uint32_array, (void **)&lengths, &n_lengths, "lengths"))
    return NULL;
  if (napi_get_array_length(env, argv[1], &count) != napi_ok || napi_get_value_bool(env, argv[4], &framed) != napi_ok)
    return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "payloads must be an array, tcpFraming a boolean");
  if (count > n_lengths) return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "lengths is shorter than payloads");
  size_t at = 0;
  for (uint32_t i = 0; i < count; i++) {
    napi_value item;
    unsigned char *payload;
    size_t len;
    if (napi_get_element(env, argv[1], i, &item) != napi_ok || get_buffer(env, item, &payload, &len, "a payload")) return NULL;
    size_t frame = framed ? 2 : 0;
    if (len > 65535 - SEAL_OVERHEAD || at + frame + len + SEAL_OVERHEAD > out_len) return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "out is too small for the batch");
    size_t n = seal_one(k, payload, len, out + at + frame);
    if (n == 0) return throw_error(env, "GATEHOP_NATIVE_CRYPTO", "the cipher failed to seal a packet");
    if (framed) {
      out[at] = (unsigned char)(n >> 8);
      out[at + 1] = (unsigned char)n;
    }
    lengths[i] = (uint32_t)n;
    at += frame + n;
  }
  napi_value result;
  napi_create_uint32(env, (uint32_t)at, &result);
  return result;
}

/* ---- opening ---- */

/* The 64-wide replay window (notes §6.4), the same rules as DataChannel#acceptId. */
static int accept_id(data_key *k, uint32_t id) {
  if (id == 0) return 0;
  if (id > k->max_seen) {
    uint32_t shift = id - k->max_seen;
    k->window = shift >= 64 ? 1 : (k->window << shift) | 1;
    k->max_seen = id;
    return 1;
  }
  uint32_t back = k->max_seen - id;
  if (back >= 64 || ((k->window >> back) & 1)) return 0;
  k->window |= (uint64_t)1 << back;
  return 1;
}

/* Opens one packet in place; sets *offset and returns the payload's length, or OPEN_FAILED/OPEN_REPLAY. */
static int32_t open_one(data_key *k, unsigned char *p, size_t len, uint32_t *offset) {
  const gh_libcrypto *c = k->c;
  if (len < 1) return OPEN_FAILED;
  int op = p[0] >> 3;
  /* The opcode byte is outside the HMAC (CBC, V1): only this key's data packets reach the cipher. */
  if ((op != OP_DATA_V1 && op != OP_DATA_V2) || (p[0] & 7) != k->key_id) return OPEN_FAILED;
  size_t head = op == OP_DATA_V2 ? 4 : 1;
  int l1 = 0, l2 = 0;
  uint32_t pid;
  unsigned char *payload;
  size_t payload_len;
  if (k->aead) {
    if (len < head + 4 + TAG_LEN || len - head - 4 - TAG_LEN > 65535) return OPEN_FAILED;
    unsigned char *pidp = p + head, *tag = pidp + 4, *ct = tag + TAG_LEN;
    int ct_len = (int)(len - head - 4 - TAG_LEN), aad_len = 0;
    unsigned char nonce[12];
    memcpy(nonce, pidp, 4);
    memcpy(nonce + 4, k->dec_iv, 8);
    if (c->EVP_CipherInit_ex(k->dec, NULL, NULL, NULL, nonce, 0) != 1) return OPEN_FAILED;
    if (c->EVP_CipherUpdate(k->dec, NULL, &aad_len, op == OP_DATA_V2 ? p : pidp, op == OP_DATA_V2 ? (int)head + 4 : 4) != 1) return OPEN_FAILED;
    if (c->EVP_CipherUpdate(k->dec, ct, &l1, ct, ct_len) != 1) return OPEN_FAILED;
    if (c->EVP_CIPHER_CTX_ctrl(k->dec, GH_CTRL_AEAD_SET_TAG, TAG_LEN, tag) != 1) return OPEN_FAILED;
    if (c->EVP_CipherFinal_ex(k->dec, ct + l1, &l2) != 1) return OPEN_FAILED;
    pid = get_be32(pidp);
    payload = ct;
    payload_len = (size_t)l1 + (size_t)l2;
  } else {
    size_t hl = k->mac_len;
    if (len < head + hl + 2 * CBC_BLOCK || len - head - hl > 65535) return OPEN_FAILED;
    unsigned char *mac = p + head, *iv = mac + hl, *ct = iv + CBC_BLOCK;
    size_t ivct_len = len - head - hl;
    unsigned char want[MAX_MAC];
    unsigned int want_len = 0;
    if (c->HMAC_Init_ex(k->dec_mac, NULL, 0, NULL, NULL) != 1 || c->HMAC_Update(k->dec_mac, iv, ivct_len) != 1 ||
        c->HMAC_Final(k->dec_mac, want, &want_len) != 1 || want_len != hl || c->CRYPTO_memcmp(mac, want, hl) != 0)
      return OPEN_FAILED;
    if (c->EVP_CipherInit_ex(k->dec, NULL, NULL, NULL, iv, 0) != 1) return OPEN_FAILED;
    if (c->EVP_CipherUpdate(k->dec, ct, &l1, ct, (int)(ivct_len - CBC_BLOCK)) != 1) return OPEN_FAILED;
    if (c->EVP_CipherFinal_ex(k->dec, ct + l1, &l2) != 1) return OPEN_FAILED;
    size_t plain_len = (size_t)l1 + (size_t)l2;
    if (plain_len < 4) return OPEN_FAILED;
    pid = get_be32(ct);
    payload = ct + 4;
    payload_len = plain_len - 4;
  }
  if (!accept_id(k, pid)) return OPEN_REPLAY;
  *offset = (uint32_t)(payload - p);
  return (int32_t)payload_len;
}

napi_value gh_data_open(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3) return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "dataOpen(key, packets, results)");
  data_key *k;
  int32_t *results;
  size_t n_results;
  uint32_t count;
  if (get_key(env, argv[0], &k) || get_typed(env, argv[2], napi_int32_array, (void **)&results, &n_results, "results")) return NULL;
  if (napi_get_array_length(env, argv[1], &count) != napi_ok) return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "packets must be an array");
  if ((size_t)count * 2 > n_results) return throw_error(env, "GATEHOP_NATIVE_ARGUMENT", "results is shorter than two per packet");
  for (uint32_t i = 0; i < count; i++) {
    napi_value item;
    unsigned char *p;
    size_t len;
    if (napi_get_element(env, argv[1], i, &item) != napi_ok || get_buffer(env, item, &p, &len, "a packet")) return NULL;
    uint32_t offset = 0;
    results[2 * i + 1] = open_one(k, p, len, &offset);
    results[2 * i] = (int32_t)offset;
  }
  return NULL;
}
