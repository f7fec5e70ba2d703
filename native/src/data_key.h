#ifndef GATEHOP_DATA_KEY_H
#define GATEHOP_DATA_KEY_H

#include <node_api.h>

/* dataKeyOpen(spec) → a keyed data channel (one OpenVPN key_id's cipher and HMAC contexts). */
napi_value gh_data_key_open(napi_env env, napi_callback_info info);
/* dataSeal(key, payloads, out, lengths, tcpFraming) → bytes written to out. */
napi_value gh_data_seal(napi_env env, napi_callback_info info);
/* dataOpen(key, packets, results): each packet authenticated, decrypted in place, replay-checked. */
napi_value gh_data_open(napi_env env, napi_callback_info info);
/* cryptoStatus() → { library } or { reason }. */
napi_value gh_crypto_status(napi_env env, napi_callback_info info);

#endif
