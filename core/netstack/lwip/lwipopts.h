/* lwIP options for Gatehop's user-space stack: one netif per instance, raw IP (an OpenVPN tun,
 * SSTP's PPP) or Ethernet with ARP and a DHCP client (SE-VPN's hub port), IPv4, TCP/UDP/ICMP, a
 * client-only stack sized for a busy desktop. */
#ifndef GATEHOP_LWIPOPTS_H
#define GATEHOP_LWIPOPTS_H

#define NO_SYS                      1
#define SYS_LIGHTWEIGHT_PROT        0
#define LWIP_SOCKET                 0
#define LWIP_NETCONN                0
#define LWIP_NETIF_API              0
#define LWIP_TIMERS                 1

#define LWIP_IPV4                   1
#define LWIP_IPV6                   0
#define LWIP_ARP                    1
#define LWIP_ETHERNET               1
/* No gratuitous ARP probe before taking the offered address: the hub's SecureNAT hands it out. */
#define DHCP_DOES_ARP_CHECK         0
#define LWIP_NETIF_STATUS_CALLBACK  1
#define ARP_TABLE_SIZE              16
#define ARP_QUEUEING                1
#define LWIP_ICMP                   1
#define LWIP_RAW                    1
#define LWIP_UDP                    1
#define LWIP_TCP                    1
#define LWIP_DHCP                   1
/* DNS servers from DHCP (option 6), caught for the host: this build has no DNS client of lwIP's. */
#define LWIP_HOOK_DHCP_PARSE_OPTION(netif, dhcp, state, msg, msg_type, option, len, pbuf, offset) \
  do { (void)(msg); gh_hook_dhcp_option(option, len, pbuf, offset); } while (0)
struct pbuf;
void gh_hook_dhcp_option(unsigned char option, unsigned char len, struct pbuf *p, unsigned short offset);
#define LWIP_AUTOIP                 0
#define LWIP_IGMP                   0
#define LWIP_DNS                    0
#define IP_FORWARD                  0
#define IP_REASSEMBLY               1
#define IP_FRAG                     0
#define IP_REASS_MAX_PBUFS          64
#define IP_DEFAULT_TTL              64

/* Memory from wasi-libc malloc: lwIP's first-fit heap is slow when fragmented. MEMP_NUM_* then cap
 * nothing: connection limits are enforced by the TypeScript layer. */
#define MEM_LIBC_MALLOC             1
#define MEMP_MEM_MALLOC             1
#define MEM_ALIGNMENT               4
/* Allocations go through counting wrappers so the host can see live lwIP memory. */
#define mem_clib_malloc             gh_mem_malloc
#define mem_clib_free               gh_mem_free
#define mem_clib_calloc             gh_mem_calloc
void *gh_mem_malloc(__SIZE_TYPE__ size);
void gh_mem_free(void *p);
void *gh_mem_calloc(__SIZE_TYPE__ n, __SIZE_TYPE__ size);
#define MEMCPY(dst, src, len)       __builtin_memcpy(dst, src, len)
#define SMEMCPY(dst, src, len)      __builtin_memcpy(dst, src, len)

/* TCP sized for tunnels with real latency: 256 KiB windows with scaling (65535 << 4 max). */
#if GATEHOP_GATEWAY
/* The capture gateway's link is a TUN on this machine (MTU 12040, core/capture): 12,000-byte
 * segments cross it, and the relay to Gatehop, in an eighth of the packets 1460-byte ones take. */
#define TCP_MSS                     12000
#else
#define TCP_MSS                     1460
#endif
#define LWIP_WND_SCALE              1
#define TCP_RCV_SCALE               4
#if GATEHOP_GATEWAY
/* On the gateway's local link the round trip is the relay's turn, not a network's: a bigger window
 * keeps the program's download going through it (65535 << TCP_RCV_SCALE is the most it can say). */
#define TCP_WND                     (1020 * 1024)
#define TCP_SND_BUF                 (1020 * 1024)
#else
#define TCP_WND                     (256 * 1024)
#define TCP_SND_BUF                 (256 * 1024)
#endif
#define TCP_SND_QUEUELEN            ((4 * TCP_SND_BUF) / 536)
#define TCP_SNDLOWAT                (16 * 1024) /* a u16_t: must stay below 0xffff - 4*MSS */
#define TCP_SNDQUEUELOWAT           (TCP_SND_QUEUELEN / 2)
#define TCP_QUEUE_OOSEQ             1
#define TCP_OOSEQ_MAX_BYTES         TCP_WND
#define TCP_OOSEQ_MAX_PBUFS         256
#define LWIP_TCP_SACK_OUT           1
#define TCP_CALCULATE_EFF_SEND_MSS  1
#define TCP_OVERSIZE                TCP_MSS
#define TCP_LISTEN_BACKLOG          0
#define LWIP_TCP_KEEPALIVE          1
#define TCP_MAXRTX                  12
/* 100 ms TCP timer (lwIP default 250): the slow timer ticks every 200 ms, so retransmission timeouts
 * and delayed ACKs are 2.5x finer; tunnels have real latency and loss. The host calls
 * sys_check_timeouts at least this often. */
#define TCP_TMR_INTERVAL            100
#define TCP_SYNMAXRTX               6
#define LWIP_TCP_TIMESTAMPS         0
#define LWIP_CALLBACK_API           1
#define LWIP_EVENT_API              0
#define LWIP_WND_SCALE_CHECK        1

/* The hook that counts retransmitted segments (a segment sent below snd_nxt). */
#define LWIP_HOOK_TCP_OUT_ADD_TCPOPTS(p, hdr, pcb, opts) gh_hook_tcp_out(p, hdr, pcb, opts)
struct pbuf;
struct tcp_hdr;
struct tcp_pcb;
unsigned int *gh_hook_tcp_out(struct pbuf *p, struct tcp_hdr *hdr, const struct tcp_pcb *pcb, unsigned int *opts);

/* Checksums must stay on towards a real tunnel; in-process test links may switch them off. */
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1
#define LWIP_CHECKSUM_ON_COPY       1
#define LWIP_CHKSUM_ALGORITHM       3

#define LWIP_STATS                  1
#define LWIP_STATS_LARGE            1
#define LWIP_STATS_DISPLAY          0
#define LINK_STATS                  0
#define ETHARP_STATS                0
#define IP_STATS                    1
#define IPFRAG_STATS                0
#define ICMP_STATS                  1
#define UDP_STATS                   1
#define TCP_STATS                   1
#define MEM_STATS                   0
#define MEMP_STATS                  0
#define SYS_STATS                   0

#define LWIP_NETIF_LINK_CALLBACK    0
#define LWIP_SINGLE_NETIF           1
#define LWIP_NETIF_LOOPBACK         0
#define LWIP_HAVE_LOOPIF            0

#define LWIP_DEBUG                  0
#define LWIP_NOASSERT_ON_ERROR      1

#endif
