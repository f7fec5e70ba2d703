/*
 * heapTrim(): hands the free memory of every glibc malloc arena back to the OS (malloc_trim(0)).
 *
 * Why: the core raises glibc's trim threshold at start (core/common/malloc-tuning.ts) so that a
 * socket read's 64 KiB buffer does not page-fault the heap top in again after every free. The
 * threshold is process-wide, so each tunnel worker thread's arena keeps up to that much free memory
 * too, and free chunks inside an arena are never returned on their own. Over a long run (the soak,
 * #24) that was most of the RSS growth. malloc_trim(0) walks every arena, trims its top and
 * madvise()s whole free pages inside it; called now and then, it costs a few page faults later
 * instead of a few every read.
 *
 * Returns true when glibc released memory, false when it had none to release, and undefined where
 * there is no malloc_trim (musl, macOS, Windows: their allocators return memory on their own).
 */
#include "heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

napi_value gh_heap_trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
#if defined(__GLIBC__)
  int released = malloc_trim(0);
  if (napi_get_boolean(env, released != 0, &result) != napi_ok) return NULL;
#else
  if (napi_get_undefined(env, &result) != napi_ok) return NULL;
#endif
  return result;
}
