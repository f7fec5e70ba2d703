/*
 * udpSendBatch(fd, data, lengths, count): the datagrams laid end to end in data (lengths[i] bytes
 * each), sent on a connected UDP socket with as few sendmmsg(2) calls as the kernel allows (64 per
 * call). Returns how many were taken; the caller sends the rest its own way (Node's dgram, which
 * queues and reports errors), so a full socket buffer (EAGAIN) or an ICMP error (ECONNREFUSED) here
 * never loses or reorders more than UDP itself would.
 *
 * Why: a synchronous send() per datagram was 20–34 % of the tunnel's CPU (core/ovpn/README.md),
 * and Node has no sendmmsg. On Linux one call hands the kernel a whole batch. Elsewhere this
 * returns 0 and every datagram goes the dgram way.
 */
#if defined(__linux__)
#define _GNU_SOURCE /* sendmmsg */
#endif
#include "udp_batch.h"

#include <errno.h>
#include <stdint.h>

#if defined(__linux__)
#include <sys/socket.h>
#include <sys/uio.h>
#endif

#define PER_CALL 64

napi_value gh_udp_send_batch(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  int32_t fd;
  uint32_t count;
  void *data;
  size_t data_len;
  bool is;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 || napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
      napi_is_buffer(env, argv[1], &is) != napi_ok || !is || napi_get_buffer_info(env, argv[1], &data, &data_len) != napi_ok ||
      napi_get_value_uint32(env, argv[3], &count) != napi_ok) {
    napi_throw_type_error(env, "GATEHOP_NATIVE_ARGUMENT", "udpSendBatch(fd, data, lengths, count)");
    return NULL;
  }
  napi_typedarray_type type;
  size_t n_lengths, offset;
  uint32_t *lengths;
  napi_value ab;
  if (napi_is_typedarray(env, argv[2], &is) != napi_ok || !is ||
      napi_get_typedarray_info(env, argv[2], &type, &n_lengths, (void **)&lengths, &ab, &offset) != napi_ok || type != napi_uint32_array || count > n_lengths) {
    napi_throw_type_error(env, "GATEHOP_NATIVE_ARGUMENT", "lengths must be a Uint32Array of at least count");
    return NULL;
  }
  uint32_t sent = 0;
#if defined(__linux__)
  size_t at = 0;
  struct mmsghdr msgs[PER_CALL];
  struct iovec iov[PER_CALL];
  while (sent < count && fd >= 0) {
    unsigned n = 0;
    size_t next = at;
    for (; n < PER_CALL && sent + n < count; n++) {
      size_t len = lengths[sent + n];
      if (next + len > data_len) {
        napi_throw_range_error(env, "GATEHOP_NATIVE_ARGUMENT", "lengths run past the end of data");
        return NULL;
      }
      iov[n].iov_base = (char *)data + next;
      iov[n].iov_len = len;
      msgs[n].msg_hdr = (struct msghdr){.msg_iov = &iov[n], .msg_iovlen = 1};
      msgs[n].msg_len = 0;
      next += len;
    }
    int r;
    do r = sendmmsg(fd, msgs, n, MSG_DONTWAIT);
    while (r < 0 && errno == EINTR);
    if (r <= 0) break; /* EAGAIN, an ICMP error, a closed fd: the rest goes through dgram */
    for (int i = 0; i < r; i++) at += iov[i].iov_len;
    sent += (uint32_t)r;
    if ((unsigned)r < n) break;
  }
#else
  (void)data;
  (void)fd;
#endif
  napi_value result;
  napi_create_uint32(env, sent, &result);
  return result;
}

/*
 * udpSocket4(): a new UDP/IPv4 socket for Node's dgram to wrap (bind({ fd })), so the tunnel knows
 * its descriptor through public API and can hand batches to udpSendBatch. -1 off Linux.
 */
napi_value gh_udp_socket4(napi_env env, napi_callback_info info) {
  (void)info;
  int fd = -1;
#if defined(__linux__)
  fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
#endif
  napi_value result;
  napi_create_int32(env, fd < 0 ? -1 : fd, &result);
  return result;
}
