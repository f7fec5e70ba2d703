/*
 * A connected UDP socket for a tunnel's carrier, read and written in batches on the event loop of
 * the thread that opened it (the main thread or a tunnel worker's own loop).
 *
 * Why not Node's dgram: it reads one datagram per recvmsg(2) and calls JavaScript once per
 * datagram with a freshly allocated buffer (a 64 KiB malloc, then an ArrayBuffer); a download
 * through a tunnel is ~50,000 datagrams per 64 MiB, about 11 per wakeup of the loop. Here one
 * recvmmsg(2) reads up to 64 straight into the receive buffer the caller gave at udpOpen (datagram
 * i in slot i, at i × SLOT), and JavaScript is called once: onRead(recv, count), with lengths[i]
 * each datagram's size (0 for one that was truncated). The same buffer is read into again after
 * the call returns: a datagram is the listener's only within the call, as TunnelLink.onPackets
 * says. Why not a new Buffer per batch (as before): each is an ArrayBuffer V8 counts as external
 * memory against the old generation's headroom, and in a tunnel thread those of a download made
 * V8 start a full mark-compact every ~100 ms (bench/README.md, "SoftEther over UDP").
 * onRead(null, -errno) reports a socket error
 * (ECONNREFUSED after an ICMP port unreachable).
 * Sends are sendmmsg(2) of a sealed batch; what the kernel does not take (a full send buffer) is
 * reported to the caller, who counts it dropped, as a full UDP queue drops anyway.
 *
 * Linux only (recvmmsg/sendmmsg); elsewhere udpOpen throws GATEHOP_NATIVE_UNSUPPORTED and the
 * tunnel uses dgram.
 */
#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "udp_socket.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#if defined(__linux__)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

#define BATCH 64
#define SLOT 4096 /* a carrier datagram is at most ~1,600 bytes; anything longer is not ours */
#define ROUNDS 4  /* at most BATCH × ROUNDS datagrams per wakeup, so timers and other sockets get their turn */

/*
 * What the JavaScript handle holds: the socket until it is freed. The socket can end first (closed,
 * or its thread's environment cleaned up) or the handle can (garbage collected); whichever goes
 * first unlinks itself, so neither touches the other's freed memory.
 */
typedef struct sock_box {
  struct udp_sock *s;
} sock_box;

typedef struct udp_sock {
  uv_poll_t poll;
  sock_box *box;
  int fd;
  int closed;
  napi_env env;
  napi_ref on_read;
  napi_ref lengths_ref;
  uint32_t *lengths;
  napi_ref recv_ref;
  unsigned char *recv; /* the caller's receive buffer, BATCH slots of SLOT bytes, held by recv_ref */
  napi_async_context async;
} udp_sock;

static napi_value throw_code(napi_env env, const char *code, const char *msg) {
  napi_throw_error(env, code, msg);
  return NULL;
}

#if defined(__linux__)

static void free_sock(uv_handle_t *h) {
  udp_sock *s = h->data;
  if (s->box) s->box->s = NULL;
  if (s->fd >= 0) close(s->fd);
  free(s);
}

/* Stops reading, lets go of the JavaScript side and closes the socket once libuv is done with it. */
static void close_sock(udp_sock *s) {
  if (s->closed) return;
  s->closed = 1;
  uv_poll_stop(&s->poll);
  if (s->on_read) napi_delete_reference(s->env, s->on_read);
  if (s->lengths_ref) napi_delete_reference(s->env, s->lengths_ref);
  if (s->recv_ref) napi_delete_reference(s->env, s->recv_ref);
  if (s->async) napi_async_destroy(s->env, s->async);
  s->on_read = s->lengths_ref = s->recv_ref = NULL;
  s->recv = NULL;
  s->async = NULL;
  napi_remove_env_cleanup_hook(s->env, (void (*)(void *))close_sock, s);
  uv_close((uv_handle_t *)&s->poll, free_sock);
}

/* Calls onRead(data, count) in a callback scope (microtasks and nextTicks run after it). */
static void deliver(udp_sock *s, napi_value data, int32_t count) {
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value fn, recv, argv[2];
  /* napi_make_callback wants an object for `this`: the global one, as for a plain function call. */
  if (napi_get_reference_value(env, s->on_read, &fn) == napi_ok && fn && napi_get_global(env, &recv) == napi_ok) {
    argv[0] = data;
    if (!argv[0]) napi_get_null(env, &argv[0]);
    napi_create_int32(env, count, &argv[1]);
    if (napi_make_callback(env, s->async, recv, fn, 2, argv, NULL) == napi_pending_exception) {
      /* As for an exception in any event handler: the process's uncaughtException. */
      napi_value err;
      if (napi_get_and_clear_last_exception(env, &err) == napi_ok) napi_fatal_exception(env, err);
    }
  }
  napi_close_handle_scope(env, scope);
}

static void on_readable(uv_poll_t *poll, int status, int events) {
  udp_sock *s = poll->data;
  (void)events;
  if (status < 0) {
    /*
     * libuv reports EPOLLERR as UV_EBADF and stops the handle. On a connected UDP socket that is
     * the kernel's pending error, an ICMP port or host unreachable: report that one (SO_ERROR
     * also clears it) and keep reading, as dgram does.
     */
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err == 0) err = -status;
    if (!s->closed) uv_poll_start(&s->poll, UV_READABLE, on_readable);
    deliver(s, NULL, -err);
    return;
  }
  struct mmsghdr msgs[BATCH];
  struct iovec iov[BATCH];
  for (int round = 0; round < ROUNDS && !s->closed; round++) {
    for (int i = 0; i < BATCH; i++) {
      iov[i].iov_base = s->recv + (size_t)i * SLOT;
      iov[i].iov_len = SLOT;
      memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int n = recvmmsg(s->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) deliver(s, NULL, -errno);
      return;
    }
    if (n == 0) return;
    for (int i = 0; i < n; i++) s->lengths[i] = (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) ? 0 : msgs[i].msg_len;
    napi_handle_scope scope;
    if (napi_open_handle_scope(s->env, &scope) != napi_ok) return;
    napi_value data;
    /* The listener may close the socket within the call (recv_ref is gone then): read no more. */
    if (napi_get_reference_value(s->env, s->recv_ref, &data) == napi_ok && data) deliver(s, data, n);
    napi_close_handle_scope(s->env, scope);
    if (n < BATCH) return;
  }
}

static void finalize_external(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  sock_box *box = data;
  /* The JavaScript object is gone: nobody can read or close the socket any more. */
  if (box->s) {
    box->s->box = NULL;
    close_sock(box->s);
  }
  free(box);
}

napi_value gh_udp_open(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  char ip[64];
  size_t ip_len;
  int32_t port, rcvbuf;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 6 ||
      napi_get_value_string_utf8(env, argv[0], ip, sizeof ip, &ip_len) != napi_ok || napi_get_value_int32(env, argv[1], &port) != napi_ok ||
      napi_get_value_int32(env, argv[2], &rcvbuf) != napi_ok)
    return throw_code(env, "GATEHOP_NATIVE_ARGUMENT", "udpOpen(ip, port, rcvbuf, lengths, recv, onRead)");
  bool is;
  napi_typedarray_type type;
  size_t n_lengths, offset;
  void *lengths, *recv;
  size_t recv_len;
  napi_value ab;
  napi_valuetype fn_type;
  if (napi_is_typedarray(env, argv[3], &is) != napi_ok || !is || napi_get_typedarray_info(env, argv[3], &type, &n_lengths, &lengths, &ab, &offset) != napi_ok ||
      type != napi_uint32_array || n_lengths < BATCH || napi_is_buffer(env, argv[4], &is) != napi_ok || !is ||
      napi_get_buffer_info(env, argv[4], &recv, &recv_len) != napi_ok || recv_len < (size_t)BATCH * SLOT ||
      napi_typeof(env, argv[5], &fn_type) != napi_ok || fn_type != napi_function)
    return throw_code(env, "GATEHOP_NATIVE_ARGUMENT", "lengths must be a Uint32Array(64), recv a Buffer of 64 × 4096 bytes, onRead a function");
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (port < 1 || port > 65535 || inet_pton(AF_INET, ip, &to.sin_addr) != 1) return throw_code(env, "GATEHOP_NATIVE_ARGUMENT", "ip must be an IPv4 address, port 1–65535");

  uv_loop_t *loop;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) return NULL;
  udp_sock *s = calloc(1, sizeof *s);
  if (!s) return throw_code(env, "GATEHOP_NATIVE_MEMORY", "out of memory");
  s->env = env;
  s->lengths = lengths;
  s->recv = recv;
  s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->fd < 0 || (rcvbuf > 0 && setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0) ||
      connect(s->fd, (struct sockaddr *)&to, sizeof to) != 0) {
    char msg[96];
    snprintf(msg, sizeof msg, "UDP socket to %s:%d: %s", ip, port, strerror(errno));
    if (s->fd >= 0) close(s->fd);
    free(s);
    return throw_code(env, "GATEHOP_NATIVE_SOCKET", msg);
  }
  napi_value name, handle;
  napi_create_string_utf8(env, "gatehop.udp", NAPI_AUTO_LENGTH, &name);
  if (napi_create_reference(env, argv[5], 1, &s->on_read) != napi_ok || napi_create_reference(env, argv[3], 1, &s->lengths_ref) != napi_ok ||
      napi_create_reference(env, argv[4], 1, &s->recv_ref) != napi_ok || napi_async_init(env, NULL, name, &s->async) != napi_ok || uv_poll_init_socket(loop, &s->poll, s->fd) != 0) {
    /* Not yet a libuv handle: undo by hand. */
    if (s->on_read) napi_delete_reference(env, s->on_read);
    if (s->lengths_ref) napi_delete_reference(env, s->lengths_ref);
    if (s->recv_ref) napi_delete_reference(env, s->recv_ref);
    if (s->async) napi_async_destroy(env, s->async);
    close(s->fd);
    free(s);
    return throw_code(env, "GATEHOP_NATIVE_SOCKET", "could not watch the UDP socket");
  }
  s->poll.data = s;
  uv_poll_start(&s->poll, UV_READABLE, on_readable);
  /* A worker thread that ends with the socket open: close it with the thread's environment. */
  napi_add_env_cleanup_hook(env, (void (*)(void *))close_sock, s);
  sock_box *box = malloc(sizeof *box);
  if (!box) {
    close_sock(s);
    return throw_code(env, "GATEHOP_NATIVE_MEMORY", "out of memory");
  }
  box->s = s;
  s->box = box;
  if (napi_create_external(env, box, finalize_external, NULL, &handle) != napi_ok) {
    s->box = NULL;
    free(box);
    close_sock(s);
    return NULL;
  }
  return handle;
}

/* The handle's socket, or NULL once it has been freed (a closed socket reads and sends nothing). */
static int get_sock(napi_env env, napi_value v, udp_sock **s) {
  napi_valuetype t;
  sock_box *box;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_external || napi_get_value_external(env, v, (void **)&box) != napi_ok || !box) {
    napi_throw_type_error(env, "GATEHOP_NATIVE_ARGUMENT", "not a native UDP socket");
    return -1;
  }
  *s = box->s;
  return 0;
}

napi_value gh_udp_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  udp_sock *s;
  if (napi_get_cb_info(env, info, &argc, &arg, NULL, NULL) != napi_ok || argc < 1 || get_sock(env, arg, &s)) return NULL;
  if (s) close_sock(s);
  return NULL;
}

napi_value gh_udp_send(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  udp_sock *s;
  void *data;
  size_t data_len, n_lengths, offset;
  uint32_t count, *lengths;
  bool is;
  napi_typedarray_type type;
  napi_value ab;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 || get_sock(env, argv[0], &s)) return NULL;
  if (napi_is_buffer(env, argv[1], &is) != napi_ok || !is || napi_get_buffer_info(env, argv[1], &data, &data_len) != napi_ok ||
      napi_get_value_uint32(env, argv[3], &count) != napi_ok || napi_is_typedarray(env, argv[2], &is) != napi_ok || !is ||
      napi_get_typedarray_info(env, argv[2], &type, &n_lengths, (void **)&lengths, &ab, &offset) != napi_ok || type != napi_uint32_array || count > n_lengths)
    return throw_code(env, "GATEHOP_NATIVE_ARGUMENT", "udpSend(socket, data, lengths, count)");
  uint32_t sent = 0;
  size_t at = 0;
  struct mmsghdr msgs[BATCH];
  struct iovec iov[BATCH];
  while (s && sent < count && !s->closed) {
    unsigned n = 0;
    size_t next = at;
    for (; n < BATCH && sent + n < count; n++) {
      size_t len = lengths[sent + n];
      if (next + len > data_len) return throw_code(env, "GATEHOP_NATIVE_ARGUMENT", "lengths run past the end of data");
      iov[n].iov_base = (char *)data + next;
      iov[n].iov_len = len;
      memset(&msgs[n], 0, sizeof msgs[n]);
      msgs[n].msg_hdr.msg_iov = &iov[n];
      msgs[n].msg_hdr.msg_iovlen = 1;
      next += len;
    }
    int r;
    do r = sendmmsg(s->fd, msgs, n, MSG_DONTWAIT);
    while (r < 0 && errno == EINTR);
    if (r <= 0) break; /* a full send buffer or an ICMP error: the rest is the caller's to count */
    for (int i = 0; i < r; i++) at += iov[i].iov_len;
    sent += (uint32_t)r;
    if ((unsigned)r < n) break;
  }
  napi_value result;
  napi_create_uint32(env, sent, &result);
  return result;
}

#else /* not Linux */

napi_value gh_udp_open(napi_env env, napi_callback_info info) {
  (void)info;
  return throw_code(env, "GATEHOP_NATIVE_UNSUPPORTED", "batched UDP needs recvmmsg/sendmmsg (Linux)");
}
napi_value gh_udp_send(napi_env env, napi_callback_info info) {
  (void)info;
  return throw_code(env, "GATEHOP_NATIVE_UNSUPPORTED", "batched UDP needs recvmmsg/sendmmsg (Linux)");
}
napi_value gh_udp_close(napi_env env, napi_callback_info info) {
  (void)env;
  (void)info;
  return NULL;
}

#endif
