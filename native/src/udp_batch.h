#ifndef GATEHOP_UDP_BATCH_H
#define GATEHOP_UDP_BATCH_H

#include <node_api.h>

/* udpSendBatch(fd, data, lengths, count) → how many datagrams the kernel took (sendmmsg). */
napi_value gh_udp_send_batch(napi_env env, napi_callback_info info);
/* udpSocket4() → a new UDP/IPv4 socket's fd for dgram to wrap, or -1. */
napi_value gh_udp_socket4(napi_env env, napi_callback_info info);

#endif
