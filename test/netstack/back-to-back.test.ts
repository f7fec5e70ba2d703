import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../core/common/index.js';
import type { TcpStream } from '../../core/netstack/index.js';
import { drainOrTimeout, eventually } from '../helpers/fds.js';
import { linkStacks, type LinkedStacks } from '../helpers/stack-link.js';

let link: LinkedStacks | null = null;
afterEach(() => {
  link?.close();
  link = null;
});

function collect(s: TcpStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  s.on('data', (c: Buffer) => parts.push(c));
  return new Promise((resolve, reject) => {
    s.once('end', () => resolve(Buffer.concat(parts)));
    s.once('error', reject);
  });
}

/** An echo server stream; stacks closed at teardown fail their open streams, which is expected here. */
function echo(s: TcpStream): void {
  s.on('error', () => {});
  s.pipe(s);
}

/** A connection from A to B's port 9, once B has accepted it (errors of teardown ignored). */
async function connectedPair(l: LinkedStacks): Promise<{ client: TcpStream; server: TcpStream }> {
  let server: TcpStream | null = null;
  l.b.listenTcp(9, (s) => {
    s.on('error', () => {});
    server = s;
  });
  const client = await l.a.connectTcp('10.9.0.2', 9);
  client.on('error', () => {});
  await eventually(() => server !== null, 2_000, 'accepted');
  return { client, server: server! };
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('two stacks back to back', () => {
  it('moves data both ways with half-close: each side ends its writes and still reads the other', async () => {
    link = linkStacks();
    const upload = randomBytes(3_000_000);
    const download = randomBytes(2_000_000);
    let serverGot: Promise<Buffer> | null = null;
    link.b.listenTcp(8080, (s) => {
      s.on('error', () => {});
      serverGot = collect(s);
      // Answer only after the client's FIN: the response must survive the client's half-close.
      serverGot.then(() => s.end(download));
    });
    const c = await link.a.connectTcp('10.9.0.2', 8080);
    const clientGot = collect(c);
    c.end(upload);
    expect(sha(await clientGot)).toBe(sha(download));
    expect(sha(await serverGot!)).toBe(sha(upload));
    await eventually(
      () => link!.a.stats.connections === 0 && link!.b.stats.connections === 0,
      5_000,
      'connections released',
    );
  });

  it('a small read owns its bytes: it does not pin a 64 KiB receive arena while a reader holds it (#34 item 7)', async () => {
    link = linkStacks();
    link.b.listenTcp(8081, (s) => {
      s.on('error', () => {});
      s.write(Buffer.from('a few bytes, as a keep-alive or a prompt'));
    });
    const c = await link.a.connectTcp('10.9.0.2', 8081);
    c.on('error', () => {});
    const [chunk] = (await once(c, 'data')) as [Buffer];
    expect(chunk.toString()).toMatch(/^a few bytes/);
    // A copy (in Node's shared 8 KiB pool at most), not a slice of the 64 KiB arena.
    expect(chunk.buffer.byteLength).toBeLessThanOrEqual(8 * 1024);
    c.destroy();
  });

  it('refuses a connection to a closed port with GH_ERR_EGRESS_CONNECT_REFUSED', async () => {
    link = linkStacks();
    await expect(link.a.connectTcp('10.9.0.2', 9)).rejects.toMatchObject({ code: ErrorCodes.EGRESS_CONNECT_REFUSED });
  });

  it('times out a connect to a host that never answers', async () => {
    link = linkStacks();
    link.cut = true;
    await expect(link.a.connectTcp('10.9.0.2', 80, { timeoutMs: 300 })).rejects.toMatchObject({
      code: ErrorCodes.EGRESS_CONNECT_TIMEOUT,
    });
    expect(link.a.stats.connections).toBe(0);
  });

  it('backs off its SYN retries (1, 3, 7 s) and leaves the connect timeout to the caller instead of giving up at ~7 s', async () => {
    const synAt: number[] = [];
    const start = Date.now();
    // A far side that never answers: every packet is dropped, SYNs are counted (IPv4, TCP, SYN flag).
    const dropCountingSyns = (p: Buffer): boolean => {
      if (p[9] === 6 && p[(p[0]! & 0x0f) * 4 + 13]! & 0x02) synAt.push(Date.now() - start);
      return false;
    };
    link = linkStacks({ impair: dropCountingSyns });
    await expect(link.a.connectTcp('10.9.0.2', 80, { timeoutMs: 9_000 })).rejects.toMatchObject({
      code: ErrorCodes.EGRESS_CONNECT_TIMEOUT,
    });
    // At 0, 1, 3 and 7 s (a fixed 1 s RTO would have sent 7 and given up with ERR_ABRT); a busy
    // event loop may delay the timer, so 3 is accepted, never more than 4, and the gaps grow.
    expect(synAt.length).toBeGreaterThanOrEqual(3);
    expect(synAt.length).toBeLessThanOrEqual(4);
    const n = synAt.length;
    expect(synAt[n - 1]! - synAt[n - 2]!).toBeGreaterThan(synAt[n - 2]! - synAt[n - 3]!);
  }, 15_000);

  it("'per-batch' acks: about one ACK per two segments in bulk, and a lone segment acked at the end of its batch, not on lwIP's timer", async () => {
    let fromA = { acks: 0 };
    let toA = { segments: 0 };
    const count = (p: Buffer): boolean => {
      if (p[9] !== 6) return true;
      const ihl = (p[0]! & 0x0f) * 4;
      const payload = p.readUInt16BE(2) - ihl - (p[ihl + 12]! >> 4) * 4;
      const fromAddressA = p[15] === 1; // source 10.9.0.1
      if (fromAddressA && payload === 0 && p[ihl + 13] === 0x10) fromA.acks++;
      if (!fromAddressA && payload > 0) toA.segments++;
      return true;
    };
    link = linkStacks({ impair: count, acksA: 'per-batch' });
    const { client, server } = await connectedPair(link);
    const got = collect(client);
    fromA = { acks: 0 };
    toA = { segments: 0 };
    server.write('x');
    // Ten event-loop turns: far less than lwIP's 100 ms TCP timer, enough for the link and the flush.
    for (let i = 0; i < 10 && fromA.acks === 0; i++) await new Promise((r) => setImmediate(r));
    expect(fromA.acks).toBe(1);
    fromA = { acks: 0 };
    toA = { segments: 0 };
    server.end(randomBytes(2 * 1024 * 1024));
    expect((await got).length).toBe(2 * 1024 * 1024 + 1);
    expect(toA.segments).toBeGreaterThan(1000);
    expect(fromA.acks / toA.segments).toBeLessThan(0.7);
  });

  it("'per-batch' acks with batched input: in-order data acked once per batch; a gap still gets its duplicate ACKs at once", async () => {
    const acks: number[] = []; // ack numbers of A's pure ACKs
    let segments = 0;
    let dropped = false;
    let sentBytes = 0;
    const watch = (p: Buffer): boolean => {
      if (p[9] !== 6) return true;
      const ihl = (p[0]! & 0x0f) * 4;
      const payload = p.readUInt16BE(2) - ihl - (p[ihl + 12]! >> 4) * 4;
      if (p[15] === 1 && payload === 0 && p[ihl + 13] === 0x10) acks.push(p.readUInt32BE(ihl + 8));
      if (p[15] === 2 && payload > 0) {
        segments++;
        sentBytes += payload;
        // Lose one segment a megabyte in, once: what follows is out of order at A.
        if (!dropped && sentBytes > 1 << 20) return !(dropped = true);
      }
      return true;
    };
    link = linkStacks({ impair: watch, acksA: 'per-batch', batchesToA: true });
    const { client, server } = await connectedPair(link);
    const got = collect(client);
    acks.length = 0;
    segments = 0;
    const data = randomBytes(2 * 1024 * 1024);
    server.end(data);
    expect(sha(await got)).toBe(sha(data));
    expect(dropped).toBe(true);
    // Per batch, not per two segments (~0.5): the link hands over several segments per turn.
    expect(acks.length / segments).toBeLessThan(0.4);
    // The gap: three or more ACKs in a row with one ack number (what triggers a fast retransmit).
    let run = 1;
    let longest = 1;
    for (let i = 1; i < acks.length; i++) {
      run = acks[i] === acks[i - 1] ? run + 1 : 1;
      longest = Math.max(longest, run);
    }
    expect(longest).toBeGreaterThanOrEqual(3);
  });

  it("'per-batch' acks: the batch's ACK leaves after its reader took the data, so it carries the whole window again (a peer that checks an ACK against its window takes it)", async () => {
    const WINDOW = 256 * 1024; // TCP_WND in lwipopts.h; A's windows go out scaled by 2^4
    const short: Array<{ advance: number; window: number }> = [];
    let advancing = 0;
    let lastAck: number | null = null;
    const watch = (p: Buffer): boolean => {
      if (p[9] !== 6 || p[15] !== 1) return true; // A's TCP segments only
      const ihl = (p[0]! & 0x0f) * 4;
      const flags = p[ihl + 13]!;
      if (!(flags & 0x10) || flags & 0x02) return true;
      const ack = p.readUInt32BE(ihl + 8);
      const window = p.readUInt16BE(ihl + 14) << 4;
      if (lastAck !== null && ack !== lastAck) {
        advancing++;
        if (window < WINDOW - 2 * 1460) short.push({ advance: (ack - lastAck) >>> 0, window });
      }
      lastAck = ack;
      return true;
    };
    link = linkStacks({ impair: watch, acksA: 'per-batch', batchesToA: true });
    const { client, server } = await connectedPair(link);
    const got = collect(client); // a reader that keeps up
    const data = randomBytes(2 * 1024 * 1024);
    server.end(data);
    expect(sha(await got)).toBe(sha(data));
    expect(advancing).toBeGreaterThan(20);
    expect(short).toEqual([]);
  });

  it("'per-turn' acks: one ACK a turn however many batches the turn brought, where 'per-batch' sends one a batch", async () => {
    const acksWith = async (acks: 'per-batch' | 'per-turn') => {
      let pureAcks = 0;
      const watch = (p: Buffer): boolean => {
        if (p[9] !== 6) return true;
        const ihl = (p[0]! & 0x0f) * 4;
        const payload = p.readUInt16BE(2) - ihl - (p[ihl + 12]! >> 4) * 4;
        if (p[15] === 1 && payload === 0 && p[ihl + 13] === 0x10) pureAcks++;
        return true;
      };
      // Batches of 4 segments, several a turn: what a TLS carrier hands over, a record at a time.
      const l = linkStacks({ impair: watch, acksA: acks, batchesToA: 4 });
      link = l;
      const { client, server } = await connectedPair(l);
      const got = collect(client);
      pureAcks = 0;
      l.toA.turns = 0;
      l.toA.batches = 0;
      const data = randomBytes(2 * 1024 * 1024);
      server.end(data);
      expect(sha(await got)).toBe(sha(data));
      const r = { acks: pureAcks, turns: l.toA.turns, batches: l.toA.batches };
      l.close();
      link = null;
      return r;
    };
    const perBatch = await acksWith('per-batch');
    const perTurn = await acksWith('per-turn');
    expect(perBatch.batches).toBeGreaterThan(4 * perBatch.turns);
    expect(perBatch.acks).toBeGreaterThan(0.8 * perBatch.batches);
    // Measured: 362 ACKs for 362 batches in 16 turns, against 36 for 378 batches in 37 turns.
    expect(perTurn.acks).toBeLessThanOrEqual(perTurn.turns + 2);
    expect(perTurn.acks).toBeLessThan(0.25 * perBatch.acks);
  });

  it('honours an AbortSignal during connect', async () => {
    link = linkStacks();
    link.cut = true;
    const ac = new AbortController();
    const p = link.a.connectTcp('10.9.0.2', 80, { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: ErrorCodes.ABORTED });
  });

  it('destroy() resets the peer, which sees GH_ERR_NETSTACK_RESET', async () => {
    link = linkStacks();
    const server = new Promise<TcpStream>((resolve) => link!.b.listenTcp(80, resolve));
    const c = await link.a.connectTcp('10.9.0.2', 80);
    const s = await server;
    const err = once(s, 'error');
    c.destroy();
    const [e] = (await err) as [Error & { code: string }];
    expect(e.code).toBe(ErrorCodes.NETSTACK_RESET);
    expect(e.message).toMatch(/ERR_RST/);
  });

  it('holds the sender back while the reader is paused, with bounded memory', async () => {
    link = linkStacks();
    let serverStream: TcpStream | null = null;
    link.b.listenTcp(80, (s) => {
      serverStream = s;
      s.on('error', () => {});
      s.pause(); // never reads
    });
    const c = await link.a.connectTcp('10.9.0.2', 80);
    const chunk = Buffer.alloc(64 * 1024, 1);
    let accepted = 0;
    const until = Date.now() + 1_000;
    while (Date.now() < until) {
      if (c.write(chunk)) accepted += chunk.length;
      else await drainOrTimeout(c, 50);
    }
    const queued = serverStream!.stats.bytesQueued + serverStream!.readableLength;
    // The receiver holds at most its window plus the readable buffer; the sender is stuck.
    expect(queued).toBeLessThanOrEqual(256 * 1024 + 128 * 1024);
    expect(c.writableLength).toBeGreaterThan(0);
    expect(accepted).toBeLessThan(4 * 1024 * 1024);
    // Reading again drains everything that was held back.
    const before = serverStream!.stats.bytesIn;
    serverStream!.resume();
    await eventually(() => serverStream!.stats.bytesIn > before, 3_000, 'sender resumed');
    c.destroy();
  });

  it("a window update lost on its way to a sender that never probes a zero window (SoftEther's SecureNAT) is sent again, and the transfer ends", async () => {
    // B plays SecureNAT: from the moment A's window is closed until an ACK reopening it reaches B,
    // nothing B sends reaches A (lwIP's own zero-window probes included: SecureNAT sends none).
    // A's pure ACKs are lost while `losing` is set: the update that reopens the window among them.
    let starved = false;
    let losing = false;
    let lost = 0;
    const impair = (p: Buffer): boolean => {
      if (p[9] !== 6) return true;
      const ihl = (p[0]! & 0x0f) * 4;
      const payload = p.readUInt16BE(2) - ihl - (p[ihl + 12]! >> 4) * 4;
      if (p[15] === 2) return !(starved && payload > 0);
      const reopens = payload === 0 && p[ihl + 13] === 0x10 && p.readUInt16BE(ihl + 14) << 4 >= 1460;
      if (!reopens) return true;
      if (losing) {
        lost++;
        return false;
      }
      starved = false;
      return true;
    };
    link = linkStacks({ impair, acksA: 'per-turn', batchesToA: true });
    const { client, server } = await connectedPair(link);
    client.pause();
    const data = randomBytes(2 * 1024 * 1024);
    server.end(data);
    await eventually(() => (client.info()?.rcvWnd ?? 1 << 20) < 1460, 5_000, 'the window closed');
    starved = true;
    losing = true;
    const got = collect(client);
    client.resume(); // reads again: the window reopens, and the ACK saying so is lost
    await eventually(() => lost > 0, 2_000, 'the window update was lost');
    await new Promise((r) => setTimeout(r, 300));
    losing = false;
    const before = link.a.stats.tcp.windowUpdatesResent;
    const stalled = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`stalled at ${client.stats.bytesIn} bytes`)), 8_000).unref(),
    );
    expect(sha(await Promise.race([got, stalled]))).toBe(sha(data));
    expect(link.a.stats.tcp.windowUpdatesResent).toBeGreaterThan(before);
  });

  it('a window its reader reopened in full is announced in full, not a segment short (SecureNAT takes no ACK that covers more than the window it carries, and retransmits until one does)', async () => {
    const WINDOW = 256 * 1024; // TCP_WND in lwipopts.h; A's windows go out scaled by 2^4
    let sent: Buffer | null = null; // B's data segment, to be sent again as a retransmission
    const acks: Array<{ ack: number; window: number }> = [];
    const watch = (p: Buffer): boolean => {
      if (p[9] !== 6) return true;
      const ihl = (p[0]! & 0x0f) * 4;
      const payload = p.readUInt16BE(2) - ihl - (p[ihl + 12]! >> 4) * 4;
      if (p[15] === 2 && payload > 0) sent = Buffer.from(p);
      if (p[15] === 1 && payload === 0 && !(p[ihl + 13]! & 0x02))
        acks.push({ ack: p.readUInt32BE(ihl + 8), window: p.readUInt16BE(ihl + 14) << 4 });
      return true;
    };
    link = linkStacks({ impair: watch, acksA: 'per-turn', batchesToA: true });
    const { client, server } = await connectedPair(link);
    // Under a segment arrives while A's reader is away: A acks it with the window short by as much.
    client.pause();
    server.write(randomBytes(1000));
    await eventually(
      () => sent !== null && acks.length > 0 && acks.at(-1)!.window < WINDOW,
      2_000,
      'the ACK of 1,000 bytes',
    );
    expect(acks.at(-1)!.window).toBeGreaterThan(WINDOW - 1460);
    // The reader takes the 1,000 bytes: lwIP alone would move its window's right edge only by whole
    // segments (receiver-side silly window avoidance) and keep announcing the short window.
    const read = once(client, 'data');
    client.resume();
    await read;
    await new Promise((r) => setImmediate(r));
    // B sends its segment again (as SecureNAT does while an ACK covers more than its window): A's
    // answer announces the whole window.
    const before = acks.length;
    link.a.input(sent!);
    await eventually(() => acks.length > before, 2_000, 'the answer to the retransmission');
    expect(acks.at(-1)!.window).toBe(WINDOW);
  });

  it('a sender with nothing more to send after the window reopened hears the update again after 1 s of silence, then after 2 s more, not at once', async () => {
    link = linkStacks({ acksA: 'per-turn', batchesToA: true });
    const { client, server } = await connectedPair(link);
    client.pause();
    // What fills A's window, then nothing: the connection stays open and idle.
    server.write(randomBytes(256 * 1024));
    await eventually(() => (client.info()?.rcvWnd ?? 1 << 20) < 1460, 5_000, 'the window closed');
    const before = link.a.stats.tcp.windowUpdatesResent;
    client.on('data', () => {});
    client.resume();
    const reopened = Date.now();
    const resent = (): number => link!.a.stats.tcp.windowUpdatesResent - before;
    // Lower bounds only (a timer is never early; a loaded machine may make it late): the first
    // resend waits for 1 s of silence (less one 200 ms poll tick), the second 2 s after it.
    await eventually(() => resent() >= 1, 10_000, 'the first resend');
    const first = Date.now();
    expect(first - reopened).toBeGreaterThanOrEqual(800);
    expect(resent()).toBe(1);
    await eventually(() => resent() >= 2, 10_000, 'the second resend');
    expect(Date.now() - first).toBeGreaterThanOrEqual(1_800);
  });

  it('carries 1,000 concurrent connections', async () => {
    link = linkStacks();
    link.b.listenTcp(7, echo); // echo
    const conns = await Promise.all(
      Array.from({ length: 1000 }, () => link!.a.connectTcp('10.9.0.2', 7, { timeoutMs: 20_000 })),
    );
    expect(link.a.stats.connections).toBe(1000);
    const results = await Promise.all(
      conns.map(async (c, i) => {
        const got = collect(c);
        c.end(Buffer.alloc(10_000, i & 0xff));
        return got;
      }),
    );
    results.forEach((r, i) => expect(r.equals(Buffer.alloc(10_000, i & 0xff))).toBe(true));
    await eventually(() => link!.a.stats.connections === 0, 10_000, 'all released');
  }, 60_000);

  it('refuses connections past maxConnections and keeps the others working', async () => {
    link = linkStacks({ maxConnections: 3 });
    link.b.listenTcp(7, echo);
    const ok = await Promise.all([1, 2, 3].map(() => link!.a.connectTcp('10.9.0.2', 7)));
    await expect(link.a.connectTcp('10.9.0.2', 7)).rejects.toMatchObject({ code: ErrorCodes.NETSTACK_LIMIT });
    const got = collect(ok[0]!);
    ok[0]!.end('still fine');
    expect((await got).toString()).toBe('still fine');
    for (const c of ok) c.destroy();
  });

  it('exchanges UDP datagrams with their source and answers ping', async () => {
    link = linkStacks({ checksums: true });
    const server = link.b.openUdp();
    const client = link.a.openUdp();
    server.on('message', (d) => server.send(Buffer.concat([Buffer.from('re:'), d.data]), d.address, d.port));
    // The server's port is learnt by sending to it first: open a socket with a known port instead.
    const got = once(client, 'message');
    client.send(Buffer.from('hi'), '10.9.0.2', server.localPort);
    const [d] = (await got) as [{ data: Buffer; address: string; port: number }];
    expect(d.data.toString()).toBe('re:hi');
    expect(d.address).toBe('10.9.0.2');
    const rtt = await link.a.ping('10.9.0.2');
    expect(rtt).toBeGreaterThanOrEqual(0);
    client.close();
    server.close();
    expect(link.a.stats.udpSockets).toBe(0);
  });

  it('a closed stack leaves no connection, socket or timer behind', async () => {
    link = linkStacks();
    link.b.listenTcp(7, echo);
    const c = await link.a.connectTcp('10.9.0.2', 7);
    const u = link.a.openUdp();
    const failed = once(c, 'error');
    link.a.close();
    const [err] = (await failed) as [Error & { code: string }];
    expect(err.code).toBe(ErrorCodes.NETSTACK_CLOSED);
    expect(u.closed).toBe(true);
    expect(link.a.stats.connections).toBe(0);
    await expect(link.a.connectTcp('10.9.0.2', 7)).rejects.toMatchObject({ code: ErrorCodes.NETSTACK_CLOSED });
  });
});

describe('the capture gateway build', () => {
  it('accepts a connection to any address and port, with that address and port as its local end', async () => {
    link = linkStacks({ gatewayB: true });
    const accepted: TcpStream[] = [];
    link.b.listenTcp(1, (s) => {
      s.on('error', () => {});
      accepted.push(s);
      s.pipe(s);
    });
    const first = await link.a.connectTcp('203.0.113.7', 443);
    const second = await link.a.connectTcp('198.18.0.9', 8080);
    await eventually(() => accepted.length === 2, 2_000, 'both accepted');
    expect(accepted.map((s) => `${s.localAddress}:${s.localPort}`)).toEqual(['203.0.113.7:443', '198.18.0.9:8080']);
    expect(accepted[0]!.remoteAddress).toBe('10.9.0.1');
    const echoed = once(first, 'data');
    first.write('hello');
    expect(String((await echoed)[0])).toBe('hello');
    first.destroy();
    second.destroy();
  });

  it('leaves the client build as it was: a SYN to another address gets no connection', async () => {
    link = linkStacks();
    let accepted = 0;
    link.b.listenTcp(1, () => accepted++);
    await expect(link.a.connectTcp('203.0.113.7', 1, { timeoutMs: 300 })).rejects.toThrow();
    expect(accepted).toBe(0);
  });
});
