/*
 * A TCP socket for a tunnel's carrier whose maximum segment size is set before it connects
 * (TCP_MAXSEG, tcp(7)): the SYN then offers that MSS, so the node's kernel sends segments that fit
 * a path narrower than either end's link. Where such a path drops the longer packets without a
 * word (an MTU black hole: no ICMP comes back, so neither kernel learns the path's MTU), a carrier
 * at the link's MSS stalls at its first full-size segment; one offered a small enough MSS never
 * sends one. Node cannot set the option, and only before connect(2) does it reach the SYN: the
 * descriptor is made here and handed to net.Socket({ fd }), which connects it.
 *
 * Linux only; elsewhere it throws GATEHOP_NATIVE_UNSUPPORTED and the carrier uses Node's socket.
 */
#include "tcp_socket.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if defined(__linux__)
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

static napi_value throw_code(napi_env env, const char *code, const char *msg) {
  napi_throw_error(env, code, msg);
  return NULL;
}

napi_value gh_tcp_socket(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t mss = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_int32(env, argv[0], &mss) != napi_ok)
    return throw_code(env, "GATEHOP_NATIVE_ARGUMENT", "tcpSocket(mss)");
  /* RFC 879's 536 is the least any host must take; above 1460 the option would not narrow anything. */
  if (mss < 536 || mss > 1460) return throw_code(env, "GATEHOP_NATIVE_ARGUMENT", "mss must be 536–1460");
#if defined(__linux__)
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "socket: %s", strerror(errno));
    return throw_code(env, "GATEHOP_NATIVE_SOCKET", msg);
  }
  if (setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss) != 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "setsockopt TCP_MAXSEG: %s", strerror(errno));
    close(fd);
    return throw_code(env, "GATEHOP_NATIVE_SOCKET", msg);
  }
  napi_value out;
  if (napi_create_int32(env, fd, &out) != napi_ok) {
    close(fd);
    return NULL;
  }
  return out;
#else
  return throw_code(env, "GATEHOP_NATIVE_UNSUPPORTED", "tcpSocket is Linux only");
#endif
}
