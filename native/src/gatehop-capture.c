/*
 * gatehop-capture: runs one program with its whole network going through a running Gatehop, with
 * no privilege (`gatehop run -- CMD…` starts it; docs/capture.md).
 *
 *   gatehop-capture <session socket> <gateway address> <tun address> <mtu> -- CMD [ARGS…]
 *   (the session's one-time key in GATEHOP_CAPTURE_KEY, removed before CMD runs)
 *
 * The parent stays in the host's namespaces: it connects to Gatehop's capture socket, and relays
 * the TUN's packets to it and back (frames: a 2-byte big-endian length, then one IPv4 packet). The
 * child makes a new user + network + mount namespace (it must be single-threaded to do so, which
 * Node never is: hence this helper), maps the user's own uid and gid, brings up `lo` and a TUN whose
 * only route is the default one, puts a private resolv.conf (Gatehop's gateway answers names) and
 * nsswitch.conf (no resolver outside the namespace) over the host's, hands the TUN to the parent
 * and runs CMD as the user, with no capabilities left. When CMD ends, the parent exits with its
 * status; when Gatehop goes, the parent closes the TUN and CMD has no network at all.
 *
 * Exit codes: CMD's own; 125 when the capture could not be set up (the reason on stderr); 126/127
 * when CMD could not be run / was not found; 128+N when CMD was killed by signal N.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <net/route.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_SETUP 125
#define FRAME_MAX 65535

static const char *g_prog = "gatehop run";

static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", g_prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int write_all(int fd, const void *buf, size_t len) {
  const uint8_t *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = write_all(fd, text, strlen(text));
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

/* ---- the relay: TUN packets to Gatehop's socket and back ---- */

/* Packets read from the TUN in one wakeup go to Gatehop in one write (frames back to back).
 * Returns -1 when the socket failed. */
static int pump_up(int tun, int gsock, int mtu) {
  static uint8_t up[8 * (2 + FRAME_MAX)];
  size_t at = 0;
  for (int i = 0; i < 64 && sizeof up - at >= 2 + (size_t)mtu; i++) {
    ssize_t k = read(tun, up + at + 2, (size_t)mtu);
    if (k <= 0) break;
    up[at] = (uint8_t)(k >> 8);
    up[at + 1] = (uint8_t)k;
    at += (size_t)k + 2;
  }
  return at > 0 ? write_all(gsock, up, at) : 0;
}

/* Frames from Gatehop into the TUN (tun < 0: read and dropped). Returns -1 at the socket's end. */
static int pump_down(int gsock, int tun) {
  static uint8_t down[2 * (2 + FRAME_MAX)];
  static size_t down_len = 0;
  ssize_t k = read(gsock, down + down_len, sizeof down - down_len);
  if (k <= 0) return -1;
  down_len += (size_t)k;
  size_t at = 0;
  while (down_len - at >= 2) {
    size_t len = ((size_t)down[at] << 8) | down[at + 1];
    if (down_len - at < 2 + len) break;
    /* A full TUN queue drops the packet, as a link would; TCP sends it again. */
    if (tun >= 0 && len > 0) (void)write(tun, down + at + 2, len);
    at += 2 + len;
  }
  memmove(down, down + at, down_len - at);
  down_len -= at;
  return 0;
}

/* ---- the child: namespaces, TUN, names, then CMD ---- */

/* A failure in the child goes to the parent as text ('E' + message); the parent says it. */
static int g_report = -1;

static void child_fail(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  msg[0] = 'E';
  vsnprintf(msg + 1, sizeof msg - 1, fmt, ap);
  va_end(ap);
  (void)write_all(g_report, msg, strlen(msg));
  _exit(EXIT_SETUP);
}

static const char *unshare_hint(int err) {
  switch (err) {
  case EPERM:
    return "this system does not let users create namespaces (Debian 10 and older: sysctl "
           "kernel.unprivileged_userns_clone=1; inside a container: its seccomp profile refuses it)";
  case ENOSPC:
    return "no user namespaces are left (sysctl user.max_user_namespaces is 0 or reached)";
  case EINVAL:
    return "this kernel has no user namespaces";
  default:
    return strerror(err);
  }
}

static void ifreq_flags_up(int sock, const char *name) {
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0) child_fail("cannot read %s's flags: %s", name, strerror(errno));
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(sock, SIOCSIFFLAGS, &ifr) < 0) child_fail("cannot bring %s up: %s", name, strerror(errno));
}

static void set_addr(int sock, const char *name, unsigned long req, const char *addr) {
  struct ifreq ifr;
  struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  sin->sin_family = AF_INET;
  if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1) child_fail("bad address %s", addr);
  if (ioctl(sock, req, &ifr) < 0) child_fail("cannot set %s on %s: %s", addr, name, strerror(errno));
}

static int make_tun(const char *tun_addr, const char *gw_addr, int mtu) {
  int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (errno == EACCES)
      child_fail("cannot open /dev/net/tun (Permission denied): desktop systems let every user open it "
                 "(mode 0666, systemd's udev rule); ask the administrator to run `chmod 0666 /dev/net/tun`");
    if (errno == ENOENT) child_fail("there is no /dev/net/tun (the tun kernel module is not loaded)");
    child_fail("cannot open /dev/net/tun: %s", strerror(errno));
  }
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  strncpy(ifr.ifr_name, "tun0", IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) child_fail("cannot create the TUN device: %s", strerror(errno));

  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) child_fail("socket: %s", strerror(errno));
  ifreq_flags_up(sock, "lo");
  set_addr(sock, "tun0", SIOCSIFADDR, tun_addr);
  set_addr(sock, "tun0", SIOCSIFNETMASK, "255.255.255.252");
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, "tun0", IFNAMSIZ - 1);
  ifr.ifr_mtu = mtu;
  if (ioctl(sock, SIOCSIFMTU, &ifr) < 0) child_fail("cannot set the TUN's MTU: %s", strerror(errno));
  ifreq_flags_up(sock, "tun0");

  /* The only route out: everything IPv4 goes to the gateway (Gatehop). No IPv6 route exists, so an
   * IPv6 connect fails at once (ENETUNREACH) instead of waiting. */
  struct rtentry rt;
  memset(&rt, 0, sizeof rt);
  ((struct sockaddr_in *)&rt.rt_dst)->sin_family = AF_INET;
  ((struct sockaddr_in *)&rt.rt_genmask)->sin_family = AF_INET;
  struct sockaddr_in *gw = (struct sockaddr_in *)&rt.rt_gateway;
  gw->sin_family = AF_INET;
  inet_pton(AF_INET, gw_addr, &gw->sin_addr);
  rt.rt_flags = RTF_UP | RTF_GATEWAY;
  rt.rt_dev = "tun0";
  if (ioctl(sock, SIOCADDRT, &rt) < 0) child_fail("cannot add the default route: %s", strerror(errno));
  close(sock);
  return fd;
}

/* Bind-mounts `file` over `target` (following a symlink at target, as resolv.conf often is). */
static int bind_over(const char *file, const char *target) {
  if (mount(file, target, NULL, MS_BIND, NULL) < 0) return -1;
  (void)mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL);
  return 0;
}

/*
 * The host's name services a program can ask over a Unix socket, and which then look names up on
 * the host's network, outside Gatehop: nscd (glibc asks it before nsswitch.conf's sources) and
 * systemd-resolved's Varlink API (nss-resolve, resolvectl, sd-resolve). Each socket that exists
 * gets /dev/null bound over it in the program's mount namespace, so a connect is refused (#59).
 * Other host services a program reaches over a Unix socket (D-Bus, the display) stay: `gatehop
 * run` routes a program, it is not a sandbox.
 */
static const char *const NAME_SERVICE_SOCKETS[] = {
    "/run/nscd/socket",
    "/var/run/nscd/socket",
    "/run/systemd/resolve/io.systemd.Resolve",
    "/run/systemd/resolve/io.systemd.Resolve.Monitor",
    NULL,
};

static void hide_name_services(void) {
  for (const char *const *p = NAME_SERVICE_SOCKETS; *p; p++) {
    struct stat st;
    if (stat(*p, &st) < 0 || !S_ISSOCK(st.st_mode)) continue;
    if (mount("/dev/null", *p, NULL, MS_BIND, NULL) < 0)
      child_fail("cannot hide the host's name service at %s from the program (%s): its lookups would "
                 "leave outside Gatehop",
                 *p, strerror(errno));
  }
}

static void run_child(int report, const char *dir, const char *tun_addr, const char *gw_addr, int mtu, char **cmd) {
  g_report = report;
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) < 0)
    child_fail("cannot create a namespace for the program: %s", unshare_hint(errno));
  char map[64];
  if (write_file("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
    child_fail("cannot write /proc/self/setgroups: %s%s", strerror(errno),
               errno == EPERM || errno == EACCES
                   ? " (on Ubuntu 23.10 and newer AppArmor restricts namespaces: sysctl "
                     "kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for this helper)"
                   : "");
  snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
  if (write_file("/proc/self/uid_map", map) < 0)
    child_fail("cannot map the user into the namespace: %s%s", strerror(errno),
               errno == EPERM ? " (on Ubuntu 23.10 and newer AppArmor restricts namespaces: sysctl "
                                "kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for this helper)"
                              : "");
  snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
  if (write_file("/proc/self/gid_map", map) < 0) child_fail("cannot map the group: %s", strerror(errno));

  /* Names: Gatehop's gateway is the only resolver the program sees. */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) child_fail("cannot make mounts private: %s", strerror(errno));
  char path[4096];
  snprintf(path, sizeof path, "%s/resolv.conf", dir);
  if (bind_over(path, "/etc/resolv.conf") < 0)
    say("warning: could not replace /etc/resolv.conf (%s): names are looked up by the program's own "
        "resolver, through Gatehop",
        strerror(errno));
  snprintf(path, sizeof path, "%s/nsswitch.conf", dir);
  if (access(path, F_OK) == 0 && bind_over(path, "/etc/nsswitch.conf") < 0)
    say("warning: could not replace /etc/nsswitch.conf (%s)", strerror(errno));
  hide_name_services();

  int tun = make_tun(tun_addr, gw_addr, mtu);

  /* The TUN to the parent; then wait for its go (it has started relaying). */
  char tag = 'F';
  struct iovec iov = {.iov_base = &tag, .iov_len = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof u);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &tun, sizeof(int));
  if (sendmsg(report, &msg, 0) < 0) _exit(EXIT_SETUP);
  close(tun);
  char go;
  if (read(report, &go, 1) != 1) _exit(EXIT_SETUP);

  execvp(cmd[0], cmd);
  /* Still here: CMD did not run. The parent reads why; the socket closes at exec otherwise. */
  char why[16];
  snprintf(why, sizeof why, "X%d", errno);
  (void)write_all(report, why, strlen(why));
  _exit(errno == ENOENT ? 127 : 126);
}

/* ---- the parent: names files, the session, the relay ---- */

static int write_names_dir(char *dir, size_t len, const char *gw_addr) {
  const char *base = getenv("XDG_RUNTIME_DIR");
  if (!base || access(base, W_OK) != 0) base = "/tmp";
  snprintf(dir, len, "%s/gatehop-run-XXXXXX", base);
  if (!mkdtemp(dir)) return -1;
  char path[4096], text[256];
  snprintf(path, sizeof path, "%s/resolv.conf", dir);
  snprintf(text, sizeof text, "# gatehop run: names are answered by Gatehop\nnameserver %s\noptions edns0\n", gw_addr);
  FILE *f = fopen(path, "we");
  if (!f) return -1;
  fputs(text, f);
  fclose(f);
  /* The host's nsswitch.conf with `hosts: files dns`: nss-resolve would ask systemd-resolved over
   * a filesystem socket, which reaches the host's resolver from any network namespace. */
  FILE *in = fopen("/etc/nsswitch.conf", "re");
  if (!in) return 0;
  snprintf(path, sizeof path, "%s/nsswitch.conf", dir);
  FILE *out = fopen(path, "we");
  if (!out) {
    fclose(in);
    return -1;
  }
  char line[1024];
  int hosts = 0;
  while (fgets(line, sizeof line, in)) {
    if (strncmp(line, "hosts:", 6) == 0) {
      fputs("hosts: files dns\n", out);
      hosts = 1;
    } else {
      fputs(line, out);
    }
  }
  if (!hosts) fputs("hosts: files dns\n", out);
  fclose(in);
  fclose(out);
  return 0;
}

static void remove_names_dir(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/resolv.conf", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/nsswitch.conf", dir);
  unlink(path);
  rmdir(dir);
}

/* Connects to Gatehop's capture socket and presents the session key. */
static int open_session(const char *path, const char *key) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof sa.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(sa.sun_path, path);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) return -1;
  char hello[256];
  snprintf(hello, sizeof hello, "GATEHOP-CAPTURE 1 %s\n", key);
  if (write_all(fd, hello, strlen(hello)) < 0) return -1;
  /* "OK\n", or a line saying why not. */
  char reply[256];
  size_t got = 0;
  while (got < sizeof reply - 1) {
    ssize_t n = read(fd, reply + got, 1);
    if (n <= 0) break;
    if (reply[got] == '\n') break;
    got++;
  }
  reply[got] = 0;
  if (strcmp(reply, "OK") != 0) {
    say("Gatehop refused the capture: %s", got ? reply : "the connection closed");
    exit(EXIT_SETUP);
  }
  return fd;
}

/*
 * TUN mode (`gatehop --tun`, started as root by its supervisor): a TUN device in this namespace,
 * relayed to Gatehop until its socket closes or a signal comes. Routes and nftables are the
 * supervisor's to set (core/capture/tun-mode.ts); closing the device removes every route through it.
 *   gatehop-capture --tun NAME SOCKET ADDRESS MTU
 *   (the key in GATEHOP_CAPTURE_KEY; the user Gatehop's core runs as in GATEHOP_TUN_UID and
 *   GATEHOP_TUN_GID)
 * Root is needed only to make the device: before it opens SOCKET, a path the core (that user)
 * named, it becomes that user for good, so it can reach only what the user could (#59).
 */
static int drop_to_user(void) {
  const char *u = getenv("GATEHOP_TUN_UID"), *g = getenv("GATEHOP_TUN_GID");
  char *end;
  if (!u || !g) return -1;
  errno = 0;
  unsigned long uid = strtoul(u, &end, 10);
  if (errno || *end || !*u || uid == 0 || uid > 0x7fffffffUL) return -1;
  unsigned long gid = strtoul(g, &end, 10);
  if (errno || *end || !*g || gid > 0x7fffffffUL) return -1;
  if (setgroups(0, NULL) < 0 || setgid((gid_t)gid) < 0 || setuid((uid_t)uid) < 0) return -1;
  /* For good: root cannot be taken back. */
  int regained = setuid(0) == 0;
  errno = 0;
  if (regained || getuid() != (uid_t)uid || geteuid() != (uid_t)uid) return -1;
  return 0;
}

static int tun_main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: gatehop-capture --tun NAME SOCKET ADDRESS MTU\n");
    return EXIT_SETUP;
  }
  const char *name = argv[2], *sock_path = argv[3], *addr = argv[4];
  int mtu = atoi(argv[5]);
  const char *key_env = getenv("GATEHOP_CAPTURE_KEY");
  if (!key_env || strlen(name) >= IFNAMSIZ || mtu < 576 || mtu > FRAME_MAX) {
    say("bad arguments (or no GATEHOP_CAPTURE_KEY)");
    return EXIT_SETUP;
  }
  g_prog = "gatehop tun";
  int tun = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (tun < 0) {
    say("cannot open /dev/net/tun: %s", strerror(errno));
    return EXIT_SETUP;
  }
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  if (ioctl(tun, TUNSETIFF, &ifr) < 0) {
    say("cannot create %s: %s", name, strerror(errno));
    return EXIT_SETUP;
  }
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  sin->sin_family = AF_INET;
  if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1 || ioctl(sock, SIOCSIFADDR, &ifr) < 0) {
    say("cannot set %s on %s: %s", addr, name, strerror(errno));
    return EXIT_SETUP;
  }
  inet_pton(AF_INET, "255.255.255.252", &sin->sin_addr);
  if (ioctl(sock, SIOCSIFNETMASK, &ifr) < 0) {
    say("cannot set the netmask: %s", strerror(errno));
    return EXIT_SETUP;
  }
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
  ifr.ifr_mtu = mtu;
  if (ioctl(sock, SIOCSIFMTU, &ifr) < 0 || ioctl(sock, SIOCGIFFLAGS, &ifr) < 0) {
    say("cannot configure %s: %s", name, strerror(errno));
    return EXIT_SETUP;
  }
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(sock, SIOCSIFFLAGS, &ifr) < 0) {
    say("cannot bring %s up: %s", name, strerror(errno));
    return EXIT_SETUP;
  }
  close(sock);
  if (drop_to_user() < 0) {
    say("cannot become the user Gatehop runs as (GATEHOP_TUN_UID %s, GATEHOP_TUN_GID %s): %s",
        getenv("GATEHOP_TUN_UID") ? getenv("GATEHOP_TUN_UID") : "unset",
        getenv("GATEHOP_TUN_GID") ? getenv("GATEHOP_TUN_GID") : "unset", errno ? strerror(errno) : "it must name a user other than root");
    return EXIT_SETUP;
  }
  char key[128];
  snprintf(key, sizeof key, "%s", key_env);
  unsetenv("GATEHOP_CAPTURE_KEY");
  int gsock = open_session(sock_path, key);
  if (gsock < 0) {
    say("cannot reach Gatehop at %s: %s", sock_path, strerror(errno));
    return EXIT_SETUP;
  }
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  fcntl(tun, F_SETFL, fcntl(tun, F_GETFL) | O_NONBLOCK);
  printf("ready\n");
  fflush(stdout);
  for (;;) {
    struct pollfd p[3] = {{.fd = sfd, .events = POLLIN}, {.fd = tun, .events = POLLIN}, {.fd = gsock, .events = POLLIN}};
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[0].revents & POLLIN) break; /* asked to stop */
    if ((p[1].revents & POLLIN) && pump_up(tun, gsock, mtu) < 0) break;
    if ((p[2].revents & (POLLIN | POLLHUP | POLLERR)) && pump_down(gsock, tun) < 0) break;
  }
  return 0;
}

static int exit_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return EXIT_SETUP;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--tun") == 0) return tun_main(argc, argv);
  if (argc < 7 || strcmp(argv[5], "--") != 0) {
    fprintf(stderr, "usage: gatehop-capture SOCKET GATEWAY TUN-ADDRESS MTU -- CMD [ARGS...]\n");
    return EXIT_SETUP;
  }
  const char *sock_path = argv[1], *gw_addr = argv[2], *tun_addr = argv[3];
  int mtu = atoi(argv[4]);
  if (mtu < 576 || mtu > FRAME_MAX) {
    say("bad MTU %s", argv[4]);
    return EXIT_SETUP;
  }
  char **cmd = argv + 6;
  const char *key_env = getenv("GATEHOP_CAPTURE_KEY");
  if (!key_env) {
    say("no session key (GATEHOP_CAPTURE_KEY); start it with `gatehop run`");
    return EXIT_SETUP;
  }
  char key[128];
  snprintf(key, sizeof key, "%s", key_env);
  unsetenv("GATEHOP_CAPTURE_KEY");

  if (access("/dev/net/tun", R_OK | W_OK) != 0) {
    if (errno == ENOENT) {
      say("there is no /dev/net/tun on this system (the tun kernel module is not loaded: modprobe tun)");
    } else {
      struct stat st;
      unsigned mode = stat("/dev/net/tun", &st) == 0 ? (unsigned)(st.st_mode & 0777) : 0;
      say("cannot open /dev/net/tun: only its owner may (mode %04o). Desktop systems let every user open it "
          "(mode 0666, from systemd's udev rule KERNEL==\"tun\", MODE=\"0666\"); ask the administrator to run "
          "`chmod 0666 /dev/net/tun`, or to add that rule",
          mode);
    }
    return EXIT_SETUP;
  }

  int gsock = open_session(sock_path, key);
  if (gsock < 0) {
    say("cannot reach Gatehop at %s: %s (is Gatehop running?)", sock_path, strerror(errno));
    return EXIT_SETUP;
  }
  memset(key, 0, sizeof key);

  char dir[1024];
  if (write_names_dir(dir, sizeof dir, gw_addr) < 0) {
    say("cannot write the namespace's resolv.conf: %s", strerror(errno));
    return EXIT_SETUP;
  }

  /* SIGCHLD, SIGTERM and SIGHUP through a signalfd, so the relay loop sees them; SIGINT and SIGQUIT
   * go to the whole foreground group from the terminal, so the program gets them itself. */
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);

  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
    say("socketpair: %s", strerror(errno));
    return EXIT_SETUP;
  }
  pid_t pid = fork();
  if (pid < 0) {
    say("fork: %s", strerror(errno));
    return EXIT_SETUP;
  }
  if (pid == 0) {
    close(sp[0]);
    close(gsock);
    close(sfd);
    sigprocmask(SIG_UNBLOCK, &mask, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    /* The program goes when this helper does (killed, or its terminal closed). */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    run_child(sp[1], dir, tun_addr, gw_addr, mtu, cmd);
  }
  close(sp[1]);

  /* The TUN, or the child's reason for failing. */
  char tag[512];
  struct iovec iov = {.iov_base = tag, .iov_len = sizeof tag - 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  ssize_t n = recvmsg(sp[0], &msg, MSG_CMSG_CLOEXEC);
  int tun = -1;
  struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
  if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(&tun, CMSG_DATA(c), sizeof(int));
  remove_names_dir(dir);
  if (tun < 0) {
    int status = 0;
    if (n > 1 && tag[0] == 'E') {
      tag[n] = 0;
      say("%s", tag + 1);
    } else {
      say("the namespace could not be set up");
    }
    waitpid(pid, &status, 0);
    return EXIT_SETUP;
  }
  if (write_all(sp[0], "g", 1) < 0) {
    say("the program's setup ended early");
    return EXIT_SETUP;
  }

  /* Relay until the program ends. */
  int child_done = 0, status = 0;
  fcntl(tun, F_SETFL, fcntl(tun, F_GETFL) | O_NONBLOCK);
  while (!child_done) {
    struct pollfd p[4] = {
        {.fd = sfd, .events = POLLIN},
        {.fd = sp[0], .events = POLLIN},
        {.fd = tun, .events = POLLIN},
        {.fd = gsock, .events = POLLIN},
    };
    if (poll(p, 4, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      if (read(sfd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGCHLD) {
          pid_t w;
          while ((w = waitpid(-1, &status, WNOHANG)) > 0)
            if (w == pid) child_done = 1;
        } else {
          kill(pid, (int)si.ssi_signo);
        }
      }
    }
    if (p[1].revents & (POLLIN | POLLHUP)) {
      /* EOF: CMD was exec'd. Else "X<errno>": it was not. */
      char why[16];
      ssize_t k = read(sp[0], why, sizeof why - 1);
      if (k > 1 && why[0] == 'X') {
        why[k] = 0;
        int err = atoi(why + 1);
        say("cannot run %s: %s", cmd[0], strerror(err));
      }
      close(sp[0]);
      sp[0] = -1;
    }
    if (tun >= 0 && gsock >= 0 && (p[2].revents & POLLIN) && pump_up(tun, gsock, mtu) < 0) {
      close(gsock);
      gsock = -1;
    }
    if (gsock >= 0 && (p[3].revents & (POLLIN | POLLHUP | POLLERR)) && pump_down(gsock, tun) < 0) {
      close(gsock);
      gsock = -1;
    }
    if (gsock < 0 && tun >= 0) {
      /* Gatehop is gone: the program loses its network rather than reach the host's. */
      close(tun);
      tun = -1;
      say("Gatehop stopped: %s has no network now", cmd[0]);
    }
  }
  return exit_status(status);
}
