#ifndef GATEHOP_UDP_SOCKET_H
#define GATEHOP_UDP_SOCKET_H

#include <node_api.h>

/* udpOpen(ip, port, rcvbuf, lengths, onRead) → a connected UDP socket read by recvmmsg on this thread's loop. */
napi_value gh_udp_open(napi_env env, napi_callback_info info);
/* udpSend(socket, data, lengths, count) → datagrams the kernel took (sendmmsg). */
napi_value gh_udp_send(napi_env env, napi_callback_info info);
/* udpClose(socket): stops reading and closes the descriptor; idempotent. */
napi_value gh_udp_close(napi_env env, napi_callback_info info);

#endif
