#ifndef GATEHOP_HEAP_H
#define GATEHOP_HEAP_H
#include <node_api.h>

/* heapTrim(): a Promise; gives the free memory of every malloc arena back to the OS, off the main thread. */
napi_value gh_heap_trim(napi_env env, napi_callback_info info);

/* limitArenas(max): at most `max` glibc malloc arenas from now on; undefined without glibc. */
napi_value gh_limit_arenas(napi_env env, napi_callback_info info);

/* mallocArenas(): how many glibc malloc arenas the process has; undefined without glibc. */
napi_value gh_malloc_arenas(napi_env env, napi_callback_info info);

/* mallocTotals(): glibc malloc's bytes across arenas (mallinfo2): system, in use, free, top, mmapped. */
napi_value gh_malloc_totals(napi_env env, napi_callback_info info);

#endif
