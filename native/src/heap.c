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

#include <stdlib.h>

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
