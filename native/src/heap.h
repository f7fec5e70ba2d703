#ifndef GATEHOP_HEAP_H
#define GATEHOP_HEAP_H
#include <node_api.h>

/* heapTrim(): returns freed memory of every malloc arena to the OS. */
napi_value gh_heap_trim(napi_env env, napi_callback_info info);

#endif
