/* The module's exports. Each function lives in a file of its own; this file only registers them. */
#include <node_api.h>
#include "data_key.h"
#include "heap.h"
#include "tcp_socket.h"
#include "udp_socket.h"

/* Bumped when an export changes meaning, so a stale build is refused instead of misused. */
#define GATEHOP_NATIVE_ABI 6

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"heapTrim", NULL, gh_heap_trim, NULL, NULL, NULL, napi_enumerable, NULL},
      {"limitArenas", NULL, gh_limit_arenas, NULL, NULL, NULL, napi_enumerable, NULL},
      {"mallocArenas", NULL, gh_malloc_arenas, NULL, NULL, NULL, napi_enumerable, NULL},
      {"mallocTotals", NULL, gh_malloc_totals, NULL, NULL, NULL, napi_enumerable, NULL},
      {"cryptoStatus", NULL, gh_crypto_status, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dataKeyOpen", NULL, gh_data_key_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dataSeal", NULL, gh_data_seal, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dataOpen", NULL, gh_data_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"udpOpen", NULL, gh_udp_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"udpSend", NULL, gh_udp_send, NULL, NULL, NULL, napi_enumerable, NULL},
      {"udpClose", NULL, gh_udp_close, NULL, NULL, NULL, napi_enumerable, NULL},
      {"tcpSocket", NULL, gh_tcp_socket, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  napi_value abi;
  if (napi_create_uint32(env, GATEHOP_NATIVE_ABI, &abi) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "abi", abi) != napi_ok) return NULL;
  return exports;
}
