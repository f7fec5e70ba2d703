/*
 * heapTrim(): hands the free memory of every glibc malloc arena back to the OS (malloc_trim(0)),
 * on a libuv thread-pool thread; resolves with true when memory was released, false when there
 * was none, and undefined where there is no malloc_trim (musl, macOS, Windows: their allocators
 * return memory on their own).
 *
 * Why: the core raises glibc's trim threshold at start (core/common/malloc-tuning.ts) so that a
 * socket read's 64 KiB buffer does not page-fault the heap top in again after every free. The
 * threshold is process-wide, so each tunnel worker thread's arena keeps up to that much free memory
 * too, and free chunks inside an arena are never returned on their own. Over a long run (the soak,
 * #24) that was most of the RSS growth. malloc_trim(0) walks every arena, trims its top and
 * madvise()s whole free pages inside it.
 *
 * Why off the main thread: it takes each arena's lock in turn and walks its free lists; during the
 * soak one call took 208 ms of the main thread, which the tray, the window and the proxy's accept
 * loop wait behind. On a pool thread it costs nobody a turn of the event loop.
 */
#include "heap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  /* 1 released, 0 nothing to release, -1 no malloc_trim here */
  int released;
} trim_job;

static void trim_execute(napi_env env, void *data) {
  (void)env;
  trim_job *job = data;
#if defined(__GLIBC__)
  job->released = malloc_trim(0) ? 1 : 0;
#else
  job->released = -1;
#endif
}

static void trim_complete(napi_env env, napi_status status, void *data) {
  trim_job *job = data;
  napi_value value = NULL;
  /* Cancelled (the environment is going away): undefined, as where there is nothing to trim. */
  if (status != napi_ok || job->released < 0) napi_get_undefined(env, &value);
  else napi_get_boolean(env, job->released == 1, &value);
  napi_resolve_deferred(env, job->deferred, value);
  napi_delete_async_work(env, job->work);
  free(job);
}

napi_value gh_heap_trim(napi_env env, napi_callback_info info) {
  (void)info;
  trim_job *job = calloc(1, sizeof *job);
  if (!job) {
    napi_throw_error(env, "GH_ERR_NATIVE", "heapTrim: out of memory");
    return NULL;
  }
  napi_value promise, name;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok) goto fail;
  if (napi_create_string_utf8(env, "gatehop:heapTrim", NAPI_AUTO_LENGTH, &name) != napi_ok) goto fail;
  if (napi_create_async_work(env, NULL, name, trim_execute, trim_complete, job, &job->work) != napi_ok) goto fail;
  if (napi_queue_async_work(env, job->work) != napi_ok) {
    napi_delete_async_work(env, job->work);
    goto fail;
  }
  return promise;
fail:
  free(job);
  napi_throw_error(env, "GH_ERR_NATIVE", "heapTrim: could not queue the work");
  return NULL;
}

/*
 * limitArenas(max): glibc creates at most `max` malloc arenas from now on (mallopt M_ARENA_MAX);
 * threads beyond share the existing ones. true when set, false when glibc refused, undefined
 * without glibc.
 *
 * Why: each tunnel worker thread otherwise allocates through an arena of its own, and an arena
 * keeps what it has touched (fragmented chunks that malloc_trim cannot hand back while a live one
 * shares their pages). In a 20-minute soak (#44) the thread arenas grew by 51.5 MB of the 72.7 MB
 * the process grew by, with 5 threads; shared arenas reuse each other's free chunks instead.
 */
napi_value gh_limit_arenas(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  uint32_t max = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_uint32(env, argv[0], &max) != napi_ok || max < 1 || max > 64) {
    napi_throw_range_error(env, "GH_ERR_NATIVE", "limitArenas: max must be 1..64");
    return NULL;
  }
  napi_value value = NULL;
#if defined(__GLIBC__)
  napi_get_boolean(env, mallopt(M_ARENA_MAX, (int)max) == 1, &value);
#else
  napi_get_undefined(env, &value);
#endif
  return value;
}

/*
 * mallocArenas(): how many malloc arenas glibc has (the <heap nr=...> entries of malloc_info(3)),
 * undefined without glibc. For tests and the soak: what limitArenas does is seen here.
 */
napi_value gh_malloc_arenas(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value value = NULL;
#if defined(__GLIBC__)
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  if (!out || malloc_info(0, out) != 0) {
    if (out) fclose(out);
    free(text);
    napi_throw_error(env, "GH_ERR_NATIVE", "mallocArenas: malloc_info failed");
    return NULL;
  }
  fclose(out);
  uint32_t arenas = 0;
  for (const char *p = text; (p = strstr(p, "<heap nr=")) != NULL; p++) arenas++;
  free(text);
  napi_create_uint32(env, arenas, &value);
#else
  napi_get_undefined(env, &value);
#endif
  return value;
}

/*
 * mallocTotals(): what glibc's malloc holds across every arena (mallinfo2(3)), in bytes:
 * { systemBytes: taken from the OS by the arenas (brk and their mmapped heaps), inUseBytes: in
 * chunks the program holds, freeBytes: in free chunks (part of which malloc_trim may already have
 * madvised away), topBytes: the free top of the main arena that a trim could release, mmappedBytes:
 * chunks mmapped on their own }; undefined without glibc 2.33 or later.
 *
 * Why: the soak (#44) sees an arena's resident size grow; whether that is memory the program still
 * holds or free memory it left scattered over pages (fragmentation) decides the fix. It takes
 * each arena's lock in turn and walks its free lists: cheap, but not for a hot path.
 */
napi_value gh_malloc_totals(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value value = NULL;
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 33)
  struct mallinfo2 mi = mallinfo2();
  const struct {
    const char *name;
    size_t bytes;
  } fields[] = {
      {"systemBytes", mi.arena},     {"inUseBytes", mi.uordblks}, {"freeBytes", mi.fordblks},
      {"topBytes", mi.keepcost},     {"mmappedBytes", mi.hblkhd},
  };
  if (napi_create_object(env, &value) != napi_ok) return NULL;
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    napi_value n;
    if (napi_create_double(env, (double)fields[i].bytes, &n) != napi_ok ||
        napi_set_named_property(env, value, fields[i].name, n) != napi_ok)
      return NULL;
  }
#else
  napi_get_undefined(env, &value);
#endif
  return value;
}
