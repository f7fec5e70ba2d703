/*
 * Gatehop netstack glue: lwIP (NO_SYS) behind a small C ABI for TypeScript.
 *
 * One WASM instance is one stack with one netif: raw IP (an OpenVPN tun, SSTP's PPP) or Ethernet
 * (SE-VPN's hub port, with lwIP's own ARP and DHCP client). The host (JS) provides
 * time, randomness and callbacks; it never re-enters lwIP from a callback (it queues instead).
 * Received TCP data is handed to JS and NOT acknowledged to the window here: JS calls
 * gh_tcp_recved() as its consumer reads, so a slow reader slows the remote sender.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/init.h"
#include "lwip/inet_chksum.h"
#include "lwip/ip4.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/icmp.h"
#include "lwip/raw.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"
#include "lwip/udp.h"
#include "lwip/dhcp.h"
#include "lwip/etharp.h"
#include "netif/ethernet.h"

#define IMPORT(name) __attribute__((import_module("env"), import_name(#name)))
#define EXPORT(name) __attribute__((export_name(#name)))

IMPORT(js_now) uint32_t js_now(void);
IMPORT(js_rand) uint32_t js_rand(void);
IMPORT(js_assert) void js_assert(const char *file, int line);
IMPORT(js_output) void js_output(const uint8_t *data, uint32_t len);
IMPORT(js_tcp_connected) void js_tcp_connected(uint32_t id);
IMPORT(js_tcp_recv) void js_tcp_recv(uint32_t id, const uint8_t *data, uint32_t len);
IMPORT(js_tcp_fin) void js_tcp_fin(uint32_t id);
IMPORT(js_tcp_sent) void js_tcp_sent(uint32_t id, uint32_t len);
IMPORT(js_tcp_err) void js_tcp_err(uint32_t id, int err);
IMPORT(js_tcp_poll) void js_tcp_poll(uint32_t id);
IMPORT(js_udp_recv) void js_udp_recv(uint32_t id, const uint8_t *data, uint32_t len, uint32_t src_ip, uint32_t src_port);
IMPORT(js_icmp_reply) void js_icmp_reply(uint32_t src_ip, uint32_t ident, uint32_t seq);
IMPORT(js_tcp_accepted) void js_tcp_accepted(uint32_t listener_id, uint32_t conn_id, uint32_t pcb, uint32_t remote_ip, uint32_t remote_port,
                                             uint32_t local_ip, uint32_t local_port);
IMPORT(js_eth_addr) void js_eth_addr(uint32_t ip, uint32_t mask, uint32_t gw, uint32_t dns1, uint32_t dns2);

u32_t sys_now(void) { return js_now(); }
uint32_t gh_rand(void) { return js_rand(); }
void gh_assert_failed(const char *file, int line) { js_assert(file, line); }

#define SCRATCH_SIZE 65536

static struct netif g_netif;
static uint8_t *g_scratch;   /* contiguous copy of a chained pbuf for the host */
static struct pbuf *g_in;    /* packet being filled by the host (gh_input_alloc → gh_input_commit) */
static uint32_t g_rexmit;    /* retransmitted TCP segments, all connections */
static uint32_t g_tcp_active;
static struct raw_pcb *g_ping;

/* Per-connection state, the pcb's callback argument. Freed exactly once: by on_err (lwIP freed the
 * pcb) or by gh_tcp_close/gh_tcp_abort (the host let go). */
struct gh_conn {
  uint32_t id;
  uint32_t rexmit;
  /* The receive window was seen nearly closed (under four segments, wu_wnd) and nothing has
   * arrived since: see resend_window_update. wu_ticks counts poll ticks with the window open
   * again, wu_sent the updates sent again so far. */
  uint8_t wu_armed;
  uint8_t wu_sent;
  uint16_t wu_ticks;
  uint32_t wu_wnd;
};

/* A segment whose sequence number is below snd_nxt was sent before: a retransmission. */
u32_t *gh_hook_tcp_out(struct pbuf *p, struct tcp_hdr *hdr, const struct tcp_pcb *pcb, u32_t *opts) {
  (void)p;
  if (pcb->state != SYN_SENT && TCP_SEQ_LT(lwip_ntohl(hdr->seqno), pcb->snd_nxt)) {
    g_rexmit++;
    if (pcb->callback_arg) ((struct gh_conn *)pcb->callback_arg)->rexmit++;
  }
  return opts;
}

/* A packet (or a frame) to the host: straight from a single pbuf, or copied once from a chain. */
static err_t output_pbuf(struct pbuf *p) {
  if (p->next == NULL) {
    js_output((const uint8_t *)p->payload, p->len);
  } else {
    u16_t n = pbuf_copy_partial(p, g_scratch, p->tot_len, 0);
    js_output(g_scratch, n);
  }
  return ERR_OK;
}

static err_t netif_output_cb(struct netif *netif, struct pbuf *p, const ip4_addr_t *ipaddr) {
  (void)netif;
  (void)ipaddr;
  return output_pbuf(p);
}

static err_t netif_init_cb(struct netif *netif) {
  netif->name[0] = 'g';
  netif->name[1] = 'h';
  netif->output = netif_output_cb;
  netif->mtu = 1500;
  return ERR_OK;
}

EXPORT(gh_init) int gh_init(uint32_t ip, uint32_t mask, uint32_t gw, uint32_t mtu) {
  ip4_addr_t a, m, g;
  g_scratch = (uint8_t *)malloc(SCRATCH_SIZE);
  if (!g_scratch) return -1;
  lwip_init();
  ip4_addr_set_u32(&a, ip);
  ip4_addr_set_u32(&m, mask);
  ip4_addr_set_u32(&g, gw);
  if (!netif_add(&g_netif, &a, &m, &g, NULL, netif_init_cb, ip4_input)) return -2;
  g_netif.mtu = (u16_t)mtu;
  netif_set_default(&g_netif);
  netif_set_link_up(&g_netif);
  netif_set_up(&g_netif);
  return 0;
}

/* ---- Ethernet (SE-VPN): lwIP's ARP, and its DHCP client for the address ---- */

/* DNS servers from the last DHCP answer (option 6), caught by the parse hook: lwIP hands them to
 * its DNS client only, which this build has not. */
static uint32_t g_dhcp_dns[2];

void gh_hook_dhcp_option(unsigned char option, unsigned char len, struct pbuf *p, unsigned short offset) {
  if (option != 6 || len < 4) return;
  uint8_t v[8] = {0};
  uint16_t n = len >= 8 ? 8 : 4;
  if (pbuf_copy_partial(p, v, n, offset) != n) return;
  /* Network order in memory, as every address crosses this ABI. */
  memcpy(&g_dhcp_dns[0], v, 4);
  if (n == 8) memcpy(&g_dhcp_dns[1], v + 4, 4);
  else g_dhcp_dns[1] = 0;
}

static err_t eth_link_output(struct netif *netif, struct pbuf *p) {
  (void)netif;
  return output_pbuf(p);
}

/* The address (bound, renewed to another, or lost) for the host. */
static void eth_status(struct netif *netif) {
  js_eth_addr(ip4_addr_get_u32(netif_ip4_addr(netif)), ip4_addr_get_u32(netif_ip4_netmask(netif)),
              ip4_addr_get_u32(netif_ip4_gw(netif)), g_dhcp_dns[0], g_dhcp_dns[1]);
}

static uint8_t g_mac[6];

static err_t eth_init_cb(struct netif *netif) {
  netif->name[0] = 'g';
  netif->name[1] = 'e';
  netif->output = etharp_output;
  netif->linkoutput = eth_link_output;
  netif->mtu = 1500;
  netif->hwaddr_len = 6;
  memcpy(netif->hwaddr, g_mac, 6);
  netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
  return ERR_OK;
}

/* An Ethernet netif with this MAC; DHCP starts at once, and js_eth_addr tells the host each address. */
EXPORT(gh_init_eth) int gh_init_eth(const uint8_t *mac, uint32_t mtu) {
  g_scratch = (uint8_t *)malloc(SCRATCH_SIZE);
  if (!g_scratch) return -1;
  lwip_init();
  memcpy(g_mac, mac, 6);
  if (!netif_add(&g_netif, IP4_ADDR_ANY4, IP4_ADDR_ANY4, IP4_ADDR_ANY4, NULL, eth_init_cb, ethernet_input)) return -2;
  g_netif.mtu = (u16_t)mtu;
  netif_set_default(&g_netif);
  netif_set_status_callback(&g_netif, eth_status);
  netif_set_link_up(&g_netif);
  netif_set_up(&g_netif);
  return dhcp_start(&g_netif) == ERR_OK ? 0 : -3;
}

/* Gives the address back to the server (DHCP release) before the tunnel closes. */
EXPORT(gh_dhcp_release) void gh_dhcp_release(void) {
  if (netif_dhcp_data(&g_netif)) dhcp_release_and_stop(&g_netif);
}

EXPORT(gh_set_checksums) void gh_set_checksums(int on) {
  NETIF_SET_CHECKSUM_CTRL(&g_netif, on ? NETIF_CHECKSUM_ENABLE_ALL : NETIF_CHECKSUM_DISABLE_ALL);
}

#include <malloc.h>

/* Live bytes held by lwIP (pbufs, pcbs, segments) and this glue, as malloc_usable_size counts them. */
static uint32_t g_heap_live;

void *gh_mem_malloc(size_t size) {
  void *p = malloc(size);
  if (p) g_heap_live += (uint32_t)malloc_usable_size(p);
  return p;
}

void *gh_mem_calloc(size_t n, size_t size) {
  void *p = calloc(n, size);
  if (p) g_heap_live += (uint32_t)malloc_usable_size(p);
  return p;
}

void gh_mem_free(void *p) {
  if (!p) return;
  g_heap_live -= (uint32_t)malloc_usable_size(p);
  free(p);
}

EXPORT(gh_heap_bytes) uint32_t gh_heap_bytes(void) { return g_heap_live; }

EXPORT(gh_malloc) void *gh_malloc(uint32_t n) { return malloc(n); }
EXPORT(gh_free) void gh_free(void *p) { free(p); }
EXPORT(gh_scratch) uint8_t *gh_scratch(void) { return g_scratch; }
/* lwIP retransmits a SYN at a fixed RTO (it backs off only once connected), so with our 1 s
 * initial RTO it gave up after TCP_SYNMAXRTX tries, ~7 s, before any caller's connect timeout: a
 * SYN that a busy SecureNAT left unanswered that long failed the connect as ERR_ABRT. Back it off
 * as RFC 6298 asks (retries at 1, 3, 7, 15, 31 s, 63 s in all); the caller's timeout decides. */
static void back_off_syns(void) {
  for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
    if (pcb->state != SYN_SENT) continue;
    int rto = (1000 / TCP_SLOW_INTERVAL) << (pcb->nrtx < 5 ? pcb->nrtx : 5);
    pcb->rto = (s16_t)rto;
  }
}

EXPORT(gh_check_timeouts) void gh_check_timeouts(void) {
  sys_check_timeouts();
  back_off_syns();
}

/* Input in two steps so the host copies the packet once, straight into the pbuf. */
EXPORT(gh_input_alloc) uint8_t *gh_input_alloc(uint32_t len) {
  if (g_in) {
    pbuf_free(g_in);
    g_in = NULL;
  }
  if (len == 0 || len > 65535) return 0;
  g_in = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_RAM);
  return g_in ? (uint8_t *)g_in->payload : 0;
}

EXPORT(gh_input_commit) int gh_input_commit(void) {
  struct pbuf *p = g_in;
  g_in = NULL;
  if (!p) return ERR_ARG;
  /* ip4_input consumes the pbuf on every path. */
  return g_netif.input(p, &g_netif);
}

/* ---- TCP ---- */

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err) {
  (void)pcb;
  (void)err; /* always ERR_OK in lwIP 2.1 */
  js_tcp_connected(((struct gh_conn *)arg)->id);
  return ERR_OK;
}

/* Acknowledge every data segment at once instead of every second one (lwIP's delayed ACK waits for
 * the TCP timer). Senders that clock on ACKs with a small window (SoftEther's SecureNAT) need it. */
static int g_quickack;
EXPORT(gh_set_quickack) void gh_set_quickack(int on) { g_quickack = on; }

/* Sends now the ACKs lwIP is holding back for its timer (one segment received since the last ACK):
 * the host calls it once a batch of input is done, so a lone segment waits for no timer while two
 * or more in one batch still share an ACK. */
EXPORT(gh_flush_acks) void gh_flush_acks(void) {
  for (struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
    if (pcb->flags & TF_ACK_DELAY) {
      tcp_ack_now(pcb);
      tcp_output(pcb);
    }
  }
}

/* Set while the host feeds lwIP a batch of input (gh_set_batching): in-order data is acked once,
 * at the batch's end (gh_flush_acks), not every second segment, as a kernel acks what GRO merged.
 * Out-of-order segments still get their duplicate ACK at once (lwIP sends it before on_recv). */
static int g_batching;
EXPORT(gh_set_batching) void gh_set_batching(int on) { g_batching = on; }

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err) {
  struct gh_conn *c = (struct gh_conn *)arg;
  (void)err;
  if (g_quickack && p != NULL) tcp_ack_now(pcb);
  else if (g_batching && p != NULL && (pcb->flags & TF_ACK_NOW)) {
    tcp_clear_flags(pcb, TF_ACK_NOW);
    tcp_set_flags(pcb, TF_ACK_DELAY);
  }
  if (p == NULL) {
    js_tcp_fin(c->id);
    return ERR_OK;
  }
  for (struct pbuf *q = p; q != NULL; q = q->next) js_tcp_recv(c->id, (const uint8_t *)q->payload, q->len);
  pbuf_free(p);
  /* tcp_receive has taken this segment out of the window; the reader has not read it yet. Under
   * four segments left, the sender may already have stopped: it waits for room for a segment of
   * its own size (which can be larger than ours), or stops short of a window it finds too small
   * (sender-side silly window avoidance), as a window under one segment stops it for sure. */
  c->wu_armed = pcb->rcv_wnd < 4u * pcb->mss;
  c->wu_wnd = pcb->rcv_wnd;
  c->wu_ticks = 0;
  c->wu_sent = 0;
  return ERR_OK;
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len) {
  (void)pcb;
  js_tcp_sent(((struct gh_conn *)arg)->id, len);
  return ERR_OK;
}

/* A closed receive window is reopened by one ACK, and RFC 1122 leaves it to the sender to probe
 * for it if that ACK is lost. SoftEther's SecureNAT, the far end of almost every VPN Gate tunnel,
 * never probes: it sends nothing while the window it last heard of is zero, and its keep-alive
 * (an ACK every 5 s, at a sequence number we have already acknowledged or just reached) draws no
 * answer once it has everything acknowledged. One lost or overtaken window update (a queue full
 * inside the node, SE-VPN's parallel connections) then stalls the download for good, with our
 * side idle and open (the switching suite's 50 paced downloads caught one at 82 %). So a window
 * seen nearly closed (under four segments) and then reopened, with nothing received since, is
 * announced again after 1 s of silence, then 2, 4, 8, 16 and 30 s; a sender with nothing more to
 * send costs us six ACKs. */
#define WU_FIRST_TICKS (1000 / (2 * TCP_TMR_INTERVAL))
#define WU_MAX_TICKS (30000 / (2 * TCP_TMR_INTERVAL))
#define WU_MAX_SENT 6
static uint32_t g_wnd_updates_resent;

static void resend_window_update(struct gh_conn *c, struct tcp_pcb *pcb) {
  if (!c->wu_armed) return;
  if (pcb->state != ESTABLISHED && pcb->state != FIN_WAIT_1 && pcb->state != FIN_WAIT_2) {
    c->wu_armed = 0;
    return;
  }
  /* Not reopened (by a segment at least) since: the reader, not a lost ACK, holds the sender back. */
  if (pcb->rcv_ann_wnd < pcb->mss || pcb->rcv_ann_wnd < c->wu_wnd + pcb->mss) {
    c->wu_ticks = 0;
    return;
  }
  uint32_t wait = (uint32_t)WU_FIRST_TICKS << c->wu_sent;
  if (wait > WU_MAX_TICKS) wait = WU_MAX_TICKS;
  if (++c->wu_ticks < wait) return;
  c->wu_ticks = 0;
  tcp_ack_now(pcb);
  tcp_output(pcb);
  g_wnd_updates_resent++;
  if (++c->wu_sent >= WU_MAX_SENT) c->wu_armed = 0;
}

static err_t on_poll(void *arg, struct tcp_pcb *pcb) {
  struct gh_conn *c = (struct gh_conn *)arg;
  resend_window_update(c, pcb);
  js_tcp_poll(c->id);
  return ERR_OK;
}

static void on_err(void *arg, err_t err) {
  struct gh_conn *c = (struct gh_conn *)arg;
  uint32_t id = c->id;
  gh_mem_free(c);
  g_tcp_active--;
  js_tcp_err(id, err);
}

/* Hands a pcb to the host: its per-connection state and every callback. */
static void attach(struct tcp_pcb *pcb, struct gh_conn *c) {
  tcp_arg(pcb, c);
  tcp_recv(pcb, on_recv);
  tcp_sent(pcb, on_sent);
  tcp_err(pcb, on_err);
  tcp_poll(pcb, on_poll, 1);
  tcp_nagle_disable(pcb);
}

/* Returns the pcb (the host's handle) or 0. */
EXPORT(gh_tcp_connect) struct tcp_pcb *gh_tcp_connect(uint32_t id, uint32_t ip, uint32_t port) {
  struct gh_conn *c = (struct gh_conn *)gh_mem_calloc(1, sizeof *c);
  struct tcp_pcb *pcb;
  ip_addr_t addr;
  if (!c) return 0;
  pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
  if (!pcb) {
    gh_mem_free(c);
    return 0;
  }
  c->id = id;
  /* RFC 6298's 1 s initial RTO instead of lwIP's fixed 3 s: a SYN lost while a fresh tunnel's far
   * side warms up (SoftEther's SecureNAT drops the first packets) is retried after 1 s, not 3. */
  pcb->rto = (s16_t)(1000 / TCP_SLOW_INTERVAL);
  attach(pcb, c);
  ip_addr_set_ip4_u32(&addr, ip);
  if (tcp_connect(pcb, &addr, (u16_t)port, on_connected) != ERR_OK) {
    tcp_arg(pcb, NULL);
    tcp_err(pcb, NULL);
    tcp_abort(pcb);
    gh_mem_free(c);
    return 0;
  }
  g_tcp_active++;
  return pcb;
}

/* Accepted connections get ids from the glue, in a range the host never uses for its own. */
static uint32_t g_next_accept_id = 0x80000000u;

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err) {
  struct gh_conn *c;
  if (err != ERR_OK || pcb == NULL) return ERR_VAL;
  c = (struct gh_conn *)gh_mem_calloc(1, sizeof *c);
  if (!c) return ERR_MEM; /* lwIP aborts the new connection */
  c->id = g_next_accept_id++;
  if (g_next_accept_id == 0) g_next_accept_id = 0x80000000u;
  attach(pcb, c);
  g_tcp_active++;
  /* The local end too: on the capture gateway it is the address and port the program dialled. */
  js_tcp_accepted((uint32_t)(uintptr_t)arg, c->id, (uint32_t)(uintptr_t)pcb, ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)), pcb->remote_port,
                  ip4_addr_get_u32(ip_2_ip4(&pcb->local_ip)), pcb->local_port);
  return ERR_OK;
}

/* Returns the listening pcb or 0 (port in use, out of memory). */
EXPORT(gh_tcp_listen) struct tcp_pcb *gh_tcp_listen(uint32_t id, uint32_t port) {
  struct tcp_pcb *pcb = tcp_new_ip_type(IPADDR_TYPE_V4);
  struct tcp_pcb *lpcb;
  if (!pcb) return 0;
  if (tcp_bind(pcb, IP4_ADDR_ANY, (u16_t)port) != ERR_OK) {
    tcp_close(pcb);
    return 0;
  }
  lpcb = tcp_listen_with_backlog(pcb, 255);
  if (!lpcb) {
    tcp_close(pcb);
    return 0;
  }
  tcp_arg(lpcb, (void *)(uintptr_t)id);
  tcp_accept(lpcb, on_accept);
  return lpcb;
}

EXPORT(gh_tcp_listen_close) void gh_tcp_listen_close(struct tcp_pcb *lpcb) { tcp_close(lpcb); }

EXPORT(gh_tcp_sndbuf) uint32_t gh_tcp_sndbuf(struct tcp_pcb *pcb) { return tcp_sndbuf(pcb); }
EXPORT(gh_tcp_sndqueuelen) uint32_t gh_tcp_sndqueuelen(struct tcp_pcb *pcb) { return tcp_sndqueuelen(pcb); }

/* len ≤ 65535; lwIP copies the bytes. Returns an lwIP err_t (ERR_MEM: wait for sent/poll). */
EXPORT(gh_tcp_write) int gh_tcp_write(struct tcp_pcb *pcb, const void *data, uint32_t len, int more) {
  return tcp_write(pcb, data, (u16_t)len, TCP_WRITE_FLAG_COPY | (more ? TCP_WRITE_FLAG_MORE : 0));
}

EXPORT(gh_tcp_output) int gh_tcp_output(struct tcp_pcb *pcb) { return tcp_output(pcb); }

/* Set while the host hands a batch's data to its readers (gh_set_defer_wnd_update): a reader's
 * tcp_recved reopens the window without an ACK of its own, and the batch's one ACK (gh_flush_acks,
 * after the readers) carries it. Otherwise lwIP sends a window update at the first read of the
 * batch, while later reads have not reopened the window yet, and that update acks the whole batch
 * with a window short of it: SoftEther's SecureNAT (no window scaling) ignores an ACK that covers
 * more than the window it carries, and a second update had to follow for every batch. */
static int g_defer_wnd_update;
EXPORT(gh_set_defer_wnd_update) void gh_set_defer_wnd_update(int on) { g_defer_wnd_update = on; }

/* A window the reader has reopened in full is announced in full. lwIP grows the window it
 * announces in steps of a segment (receiver-side silly window avoidance), so a window reopened to
 * 65,535 can stay announced as 64,241 for good. SecureNAT ignores an ACK that covers more than the
 * window it carries, and after a whole window's mission it waits for exactly that ACK: with up to
 * 65,534 bytes unacknowledged in its view, an ACK announcing 64,241 is ignored each time it
 * retransmits, forever (the switching suite's paced downloads stalled so at 66 % and 85 %, the
 * node retransmitting its first two segments every 90 ms and ignoring each ACK). Announced in
 * full, the window is as large as any mission it can have sent, and the next ACK is taken. */
static void announce_full_window(struct tcp_pcb *pcb) {
  if (pcb->rcv_wnd == TCP_WND_MAX(pcb) && pcb->rcv_ann_wnd < pcb->rcv_wnd) pcb->rcv_ann_wnd = pcb->rcv_wnd;
}

EXPORT(gh_tcp_recved) void gh_tcp_recved(struct tcp_pcb *pcb, uint32_t len) {
  if (g_defer_wnd_update) {
    /* tcp_recved's window arithmetic, with the update left to the batch's ACK. */
    uint32_t wnd = pcb->rcv_wnd + len;
    pcb->rcv_wnd = (tcpwnd_size_t)(wnd > TCP_WND_MAX(pcb) || wnd < pcb->rcv_wnd ? TCP_WND_MAX(pcb) : wnd);
    if (tcp_update_rcv_ann_wnd(pcb) >= TCP_WND_UPDATE_THRESHOLD) tcp_set_flags(pcb, TF_ACK_DELAY);
    announce_full_window(pcb);
    return;
  }
  while (len > 0) {
    u16_t n = len > 0xffff ? 0xffff : (u16_t)len;
    tcp_recved(pcb, n);
    len -= n;
  }
  announce_full_window(pcb);
}

EXPORT(gh_tcp_shutdown_tx) int gh_tcp_shutdown_tx(struct tcp_pcb *pcb) { return tcp_shutdown(pcb, 0, 1); }

static void detach(struct tcp_pcb *pcb) {
  struct gh_conn *c = (struct gh_conn *)pcb->callback_arg;
  tcp_arg(pcb, NULL);
  tcp_recv(pcb, NULL);
  tcp_sent(pcb, NULL);
  tcp_err(pcb, NULL);
  tcp_poll(pcb, NULL, 0);
  gh_mem_free(c);
  g_tcp_active--;
}

/* Graceful close (FIN, then lwIP finishes the handshake alone); falls back to RST on ERR_MEM. */
EXPORT(gh_tcp_close) void gh_tcp_close(struct tcp_pcb *pcb) {
  detach(pcb);
  if (tcp_close(pcb) != ERR_OK) tcp_abort(pcb);
}

EXPORT(gh_tcp_abort) void gh_tcp_abort(struct tcp_pcb *pcb) {
  detach(pcb);
  tcp_abort(pcb);
}

/* out: state, srtt ms, retransmissions, snd_buf, rcv_wnd, mss, local port, snd_queuelen, the
 * window last announced (right edge less rcv_nxt), ms since the peer last sent anything, the peer's
 * window, window updates sent again since the last segment */
EXPORT(gh_tcp_info) void gh_tcp_info(struct tcp_pcb *pcb, uint32_t *out) {
  struct gh_conn *c = (struct gh_conn *)pcb->callback_arg;
  out[0] = pcb->state;
  out[1] = (uint32_t)(pcb->sa >> 3) * TCP_SLOW_INTERVAL;
  out[2] = c ? c->rexmit : 0;
  out[3] = pcb->snd_buf;
  out[4] = pcb->rcv_wnd;
  out[5] = pcb->mss;
  out[6] = pcb->local_port;
  out[7] = pcb->snd_queuelen;
  out[8] = TCP_SEQ_GT(pcb->rcv_ann_right_edge, pcb->rcv_nxt) ? pcb->rcv_ann_right_edge - pcb->rcv_nxt : 0;
  out[9] = (uint32_t)(tcp_ticks - pcb->tmr) * TCP_SLOW_INTERVAL;
  out[10] = pcb->snd_wnd;
  out[11] = c ? c->wu_sent : 0;
}

/* ---- UDP ---- */

static void on_udp(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port) {
  uint32_t id = (uint32_t)(uintptr_t)arg;
  uint32_t src = ip4_addr_get_u32(ip_2_ip4(addr));
  (void)pcb;
  if (p->next == NULL) {
    js_udp_recv(id, (const uint8_t *)p->payload, p->len, src, port);
  } else {
    u16_t n = pbuf_copy_partial(p, g_scratch, p->tot_len, 0);
    js_udp_recv(id, g_scratch, n, src, port);
  }
  pbuf_free(p);
}

EXPORT(gh_udp_new) struct udp_pcb *gh_udp_new(uint32_t id) {
  struct udp_pcb *pcb = udp_new_ip_type(IPADDR_TYPE_V4);
  if (!pcb) return 0;
  if (udp_bind(pcb, IP4_ADDR_ANY, 0) != ERR_OK) {
    udp_remove(pcb);
    return 0;
  }
  udp_recv(pcb, on_udp, (void *)(uintptr_t)id);
  return pcb;
}

EXPORT(gh_udp_local_port) uint32_t gh_udp_local_port(struct udp_pcb *pcb) { return pcb->local_port; }

EXPORT(gh_udp_sendto) int gh_udp_sendto(struct udp_pcb *pcb, const void *data, uint32_t len, uint32_t ip, uint32_t port) {
  ip_addr_t addr;
  struct pbuf *p;
  err_t e;
  if (len > 65507) return ERR_VAL;
  p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)len, PBUF_RAM);
  if (!p) return ERR_MEM;
  memcpy(p->payload, data, len);
  ip_addr_set_ip4_u32(&addr, ip);
  e = udp_sendto(pcb, p, &addr, (u16_t)port);
  pbuf_free(p);
  return e;
}

EXPORT(gh_udp_remove) void gh_udp_remove(struct udp_pcb *pcb) { udp_remove(pcb); }

/* ---- ICMP echo (ping) ---- */

static u8_t on_raw(void *arg, struct raw_pcb *pcb, struct pbuf *p, const ip_addr_t *addr) {
  uint8_t h[60 + 8];
  u16_t ihl;
  (void)arg;
  (void)pcb;
  if (p->tot_len < 28) return 0;
  if (pbuf_copy_partial(p, h, 1, 0) != 1) return 0;
  ihl = (u16_t)((h[0] & 0x0f) * 4);
  if (ihl < 20 || p->tot_len < ihl + 8) return 0;
  pbuf_copy_partial(p, h, (u16_t)(ihl + 8), 0);
  if (h[ihl] != ICMP_ER) return 0; /* not an echo reply: let lwIP handle it */
  js_icmp_reply(ip4_addr_get_u32(ip_2_ip4(addr)), (uint32_t)((h[ihl + 4] << 8) | h[ihl + 5]), (uint32_t)((h[ihl + 6] << 8) | h[ihl + 7]));
  pbuf_free(p);
  return 1;
}

EXPORT(gh_ping) int gh_ping(uint32_t ip, uint32_t ident, uint32_t seq, uint32_t size) {
  ip_addr_t addr;
  struct pbuf *p;
  struct icmp_echo_hdr *e;
  err_t err;
  if (size > 1400) return ERR_VAL;
  if (!g_ping) {
    g_ping = raw_new(IP_PROTO_ICMP);
    if (!g_ping) return ERR_MEM;
    raw_recv(g_ping, on_raw, NULL);
  }
  p = pbuf_alloc(PBUF_IP, (u16_t)(sizeof(struct icmp_echo_hdr) + size), PBUF_RAM);
  if (!p) return ERR_MEM;
  e = (struct icmp_echo_hdr *)p->payload;
  ICMPH_TYPE_SET(e, ICMP_ECHO);
  ICMPH_CODE_SET(e, 0);
  e->id = lwip_htons((u16_t)ident);
  e->seqno = lwip_htons((u16_t)seq);
  for (uint32_t i = 0; i < size; i++) ((uint8_t *)(e + 1))[i] = (uint8_t)i;
  e->chksum = 0;
  e->chksum = inet_chksum(e, p->len);
  ip_addr_set_ip4_u32(&addr, ip);
  err = raw_sendto(g_ping, p, &addr);
  pbuf_free(p);
  return err;
}

/* out: ip xmit, ip recv, ip drop, tcp xmit, tcp recv, tcp drop, tcp retransmissions, tcp chkerr,
 *      udp xmit, udp recv, udp drop, icmp xmit, icmp recv, tcp active, ip chkerr, ip lenerr,
 *      window updates sent again */
EXPORT(gh_stats) void gh_stats(uint32_t *out) {
  out[0] = lwip_stats.ip.xmit;
  out[1] = lwip_stats.ip.recv;
  out[2] = lwip_stats.ip.drop;
  out[3] = lwip_stats.tcp.xmit;
  out[4] = lwip_stats.tcp.recv;
  out[5] = lwip_stats.tcp.drop;
  out[6] = g_rexmit;
  out[7] = lwip_stats.tcp.chkerr;
  out[8] = lwip_stats.udp.xmit;
  out[9] = lwip_stats.udp.recv;
  out[10] = lwip_stats.udp.drop;
  out[11] = lwip_stats.icmp.xmit;
  out[12] = lwip_stats.icmp.recv;
  out[13] = g_tcp_active;
  out[14] = lwip_stats.ip.chkerr;
  out[15] = lwip_stats.ip.lenerr;
  out[16] = g_wnd_updates_resent;
}
