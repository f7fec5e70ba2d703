#!/usr/bin/env python3
"""Bridges a TUN device (inside the network namespace this runs in) to stdin/stdout.

Frames on stdin/stdout: a 2-byte big-endian length, then one IP packet. An empty frame on stdout
says "ready". Impairment applies in both directions: fixed delay, uniform jitter, random loss, and
reordering (a packet held back by an extra delay). The kernel here has no netem qdisc, so this is
where delay and loss are injected. Standard library only.
"""
import argparse, fcntl, heapq, os, random, select, struct, subprocess, sys, time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000

ap = argparse.ArgumentParser()
ap.add_argument('--name', default='ghtun0')
ap.add_argument('--addr', required=True, help='kernel-side address, e.g. 10.77.0.1/24')
ap.add_argument('--mtu', type=int, default=1500)
ap.add_argument('--delay-ms', type=float, default=0)
ap.add_argument('--jitter-ms', type=float, default=0)
ap.add_argument('--loss', type=float, default=0)
ap.add_argument('--reorder', type=float, default=0, help='probability a packet is held back')
ap.add_argument('--reorder-ms', type=float, default=10)
ap.add_argument('--seed', type=int, default=1)
args = ap.parse_args()
rng = random.Random(args.seed)

tun = os.open('/dev/net/tun', os.O_RDWR)
fcntl.ioctl(tun, TUNSETIFF, struct.pack('16sH', args.name.encode(), IFF_TUN | IFF_NO_PI))
subprocess.check_call(['ip', 'link', 'set', 'dev', args.name, 'mtu', str(args.mtu)])
subprocess.check_call(['ip', 'addr', 'add', args.addr, 'dev', args.name])
subprocess.check_call(['ip', 'link', 'set', 'dev', args.name, 'up'])
os.set_blocking(tun, False)
os.set_blocking(0, False)
out = sys.stdout.buffer

queue = []  # (due, seq, to_kernel, packet)
seq = 0
stats = {'to_kernel': 0, 'to_stack': 0, 'dropped': 0}


def schedule(to_kernel, packet):
    global seq
    if args.loss and rng.random() < args.loss:
        stats['dropped'] += 1
        return
    delay = args.delay_ms + (rng.uniform(0, args.jitter_ms) if args.jitter_ms else 0)
    if args.reorder and rng.random() < args.reorder:
        delay += args.reorder_ms
    seq += 1
    heapq.heappush(queue, (time.monotonic() + delay / 1000.0, seq, to_kernel, packet))


def deliver(to_kernel, packet):
    if to_kernel:
        try:
            os.write(tun, packet)
            stats['to_kernel'] += 1
        except BlockingIOError:
            stats['dropped'] += 1
    else:
        out.write(struct.pack('>H', len(packet)) + packet)
        stats['to_stack'] += 1


out.write(b'\x00\x00')
out.flush()
inbuf = b''
while True:
    timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else 0.5
    readable, _, _ = select.select([tun, 0], [], [], timeout)
    if tun in readable:
        for _ in range(256):
            try:
                packet = os.read(tun, 65535)
            except BlockingIOError:
                break
            schedule(False, packet)
    if 0 in readable:
        try:
            data = os.read(0, 1 << 20)
        except BlockingIOError:
            data = None
        if data == b'':
            break  # the test closed our stdin: done
        if data:
            inbuf += data
            while len(inbuf) >= 2:
                n = struct.unpack('>H', inbuf[:2])[0]
                if len(inbuf) < 2 + n:
                    break
                schedule(True, inbuf[2:2 + n])
                inbuf = inbuf[2 + n:]
    now = time.monotonic()
    sent = False
    while queue and queue[0][0] <= now:
        _, _, to_kernel, packet = heapq.heappop(queue)
        deliver(to_kernel, packet)
        sent = True
    if sent:
        out.flush()
sys.stderr.write('tun_bridge: %r\n' % stats)
