#ifndef GATEHOP_TCP_SOCKET_H
#define GATEHOP_TCP_SOCKET_H

#include <node_api.h>

/* tcpSocket(mss) → an IPv4 TCP socket's descriptor, not connected, whose SYN offers at most `mss`. */
napi_value gh_tcp_socket(napi_env env, napi_callback_info info);

#endif
