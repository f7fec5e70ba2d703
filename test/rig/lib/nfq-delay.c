/*
 * nfq-delay: delay, jitter and loss for packets on one NFQUEUE (this kernel has no netem qdisc).
 *   nfq-delay QUEUE DELAY_MS JITTER_MS LOSS SEED [MAX_BYTES]
 * Each packet is dropped with probability LOSS, otherwise accepted DELAY_MS + uniform(0, JITTER_MS)
 * later; jitter larger than the packet spacing reorders packets, as netem's does. With MAX_BYTES,
 * an IP packet longer than that is dropped without a word (a path MTU black hole: no ICMP). The
 * kernel hands NFQUEUE each segment of a GSO packet on its own, so lengths are the wire's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_PENDING 65536

struct pending { uint64_t due_ns; uint32_t id; };
static struct pending heap[MAX_PENDING];
static int heap_len;
static double delay_ms, jitter_ms, loss;
static long max_bytes; /* 0: no limit */
static struct nfq_q_handle *qh;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void heap_push(struct pending p) {
  int i = heap_len++;
  heap[i] = p;
  while (i > 0) {
    int parent = (i - 1) / 2;
    if (heap[parent].due_ns <= heap[i].due_ns) break;
    struct pending t = heap[parent]; heap[parent] = heap[i]; heap[i] = t;
    i = parent;
  }
}

static struct pending heap_pop(void) {
  struct pending top = heap[0];
  heap[0] = heap[--heap_len];
  int i = 0;
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap_len && heap[l].due_ns < heap[m].due_ns) m = l;
    if (r < heap_len && heap[r].due_ns < heap[m].due_ns) m = r;
    if (m == i) break;
    struct pending t = heap[m]; heap[m] = heap[i]; heap[i] = t;
    i = m;
  }
  return top;
}

static int on_packet(struct nfq_q_handle *q, struct nfgenmsg *msg, struct nfq_data *nfa, void *data) {
  (void)msg; (void)data;
  struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
  if (!ph) return 0;
  uint32_t id = ntohl(ph->packet_id);
  if (max_bytes > 0) {
    unsigned char *ip = NULL;
    int got = nfq_get_payload(nfa, &ip);
    /* IPv4 total length (bytes 2-3); the rig's paths are IPv4 only. */
    long len = got >= 4 && (ip[0] >> 4) == 4 ? ((long)ip[2] << 8 | ip[3]) : got;
    if (len > max_bytes) return nfq_set_verdict(q, id, NF_DROP, 0, NULL);
  }
  if (loss > 0 && drand48() < loss) return nfq_set_verdict(q, id, NF_DROP, 0, NULL);
  double ms = delay_ms + (jitter_ms > 0 ? drand48() * jitter_ms : 0);
  if (ms <= 0 || heap_len >= MAX_PENDING) return nfq_set_verdict(q, id, NF_ACCEPT, 0, NULL);
  heap_push((struct pending){ now_ns() + (uint64_t)(ms * 1e6), id });
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 6 && argc != 7) {
    fprintf(stderr, "usage: nfq-delay QUEUE DELAY_MS JITTER_MS LOSS SEED [MAX_BYTES]\n");
    return 2;
  }
  max_bytes = argc == 7 ? atol(argv[6]) : 0;
  int queue = atoi(argv[1]);
  delay_ms = atof(argv[2]); jitter_ms = atof(argv[3]); loss = atof(argv[4]);
  srand48(atol(argv[5]));
  struct nfq_handle *h = nfq_open();
  if (!h) { perror("nfq_open"); return 1; }
  qh = nfq_create_queue(h, (uint16_t)queue, on_packet, NULL);
  if (!qh) { perror("nfq_create_queue"); return 1; }
  /* The IP header's first bytes, for MAX_BYTES; nothing else is read. */
  nfq_set_mode(qh, max_bytes > 0 ? NFQNL_COPY_PACKET : NFQNL_COPY_META, max_bytes > 0 ? 20 : 0);
  nfq_set_queue_maxlen(qh, 20000);
  int fd = nfq_fd(h);
  nfnl_rcvbufsiz(nfq_nfnlh(h), 8 * 1024 * 1024);
  char buf[65536];
  printf("ready\n");
  fflush(stdout);
  for (;;) {
    int timeout = -1;
    if (heap_len > 0) {
      uint64_t now = now_ns();
      timeout = heap[0].due_ns > now ? (int)((heap[0].due_ns - now) / 1000000) : 0;
    }
    struct pollfd pfd = { fd, POLLIN, 0 };
    int n = poll(&pfd, 1, timeout);
    if (n > 0 && (pfd.revents & POLLIN)) {
      int rv = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (rv > 0) nfq_handle_packet(h, buf, rv);
      else if (rv < 0 && errno == ENOBUFS) fprintf(stderr, "nfq-delay: queue overrun, packets lost\n");
    }
    uint64_t now = now_ns();
    while (heap_len > 0 && heap[0].due_ns <= now) nfq_set_verdict(qh, heap_pop().id, NF_ACCEPT, 0, NULL);
  }
}
