/* lwIP port for wasm32 (clang --target=wasm32-wasi, no stdio, no WASI imports). */
#ifndef GATEHOP_ARCH_CC_H
#define GATEHOP_ARCH_CC_H

#include <stdint.h>
#include <stddef.h>

#define BYTE_ORDER LITTLE_ENDIAN
#define LWIP_NO_INTTYPES_H 1
#define X8_F  "02x"
#define U16_F "u"
#define S16_F "d"
#define X16_F "x"
#define U32_F "u"
#define S32_F "d"
#define X32_F "x"
#define SZT_F "zu"

/* Debug output is compiled out; an assertion failure ends in the host's js_assert (which throws). */
#define LWIP_PLATFORM_DIAG(x) do { } while (0)
void gh_assert_failed(const char *file, int line);
#define LWIP_PLATFORM_ASSERT(x) gh_assert_failed(__FILE__, __LINE__)

uint32_t gh_rand(void);
#define LWIP_RAND() gh_rand()

#endif
