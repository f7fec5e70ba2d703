/**
 * The capture gateway's name server: it answers the captured program's queries itself, from the
 * fake-address pool (fake-ips.ts), so no query leaves the machine, in clear or at all: the name
 * travels with the connection and is resolved inside the tunnel. A (the name's fake address),
 * AAAA, HTTPS and SVCB (none: IPv6 is not carried, and an empty answer makes a program use A), PTR
 * of a fake address (its name); other types are refused as not implemented. Queries are parsed
 * bounded by their own lengths; anything malformed gets no answer.
 */
import type { FakeIps } from './fake-ips.js';

const TYPE_A = 1;
const TYPE_PTR = 12;
const TYPE_AAAA = 28;
const TYPE_SVCB = 64;
const TYPE_HTTPS = 65;
const CLASS_IN = 1;
const RCODE_FORMERR = 1;
const RCODE_NXDOMAIN = 3;
const RCODE_NOTIMP = 4;
/** Short, as mihomo's fake-ip answers: the address stays the name's for the session anyway. */
const TTL = 1;

interface Question {
  name: string;
  type: number;
  cls: number;
  /** The question's bytes as sent (echoed in the answer). */
  raw: Buffer;
}

function parseQuestion(q: Buffer): Question | null {
  if (q.length < 12 || q.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let at = 12;
  for (;;) {
    if (at >= q.length) return null;
    const len = q[at]!;
    if (len === 0) {
      at++;
      break;
    }
    if (len > 63 || at + 1 + len > q.length) return null; // no compression in a question
    labels.push(q.subarray(at + 1, at + 1 + len).toString('latin1'));
    at += 1 + len;
    if (at - 12 > 255) return null;
  }
  if (at + 4 > q.length) return null;
  return {
    name: labels.join('.').toLowerCase(),
    type: q.readUInt16BE(at),
    cls: q.readUInt16BE(at + 2),
    raw: q.subarray(12, at + 4),
  };
}

function encodeName(name: string): Buffer {
  const parts = name.split('.').filter((l) => l.length > 0);
  return Buffer.concat([
    ...parts.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])),
    Buffer.from([0]),
  ]);
}

function response(query: Buffer, q: Question | null, rcode: number, answers: Buffer[]): Buffer {
  const h = Buffer.alloc(12);
  query.copy(h, 0, 0, 2); // id
  const rd = query[2]! & 0x01;
  const opcode = query[2]! & 0x78;
  h[2] = 0x80 | opcode | rd; // QR, the query's opcode and RD
  h[3] = 0x80 | rcode; // RA
  h.writeUInt16BE(q ? 1 : 0, 4);
  h.writeUInt16BE(answers.length, 6);
  return Buffer.concat([h, q ? q.raw : Buffer.alloc(0), ...answers]);
}

function record(type: number, rdata: Buffer): Buffer {
  const r = Buffer.alloc(12);
  r.writeUInt16BE(0xc00c, 0); // the question's name
  r.writeUInt16BE(type, 2);
  r.writeUInt16BE(CLASS_IN, 4);
  r.writeUInt32BE(TTL, 6);
  r.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([r, rdata]);
}

const NAME_RE = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** The answer to one DNS query, or null when the query is not one to answer (malformed, a response). */
export function answerQuery(query: Buffer, fake: FakeIps): Buffer | null {
  if (query.length < 12 || (query[2]! & 0x80) !== 0) return null;
  const q = parseQuestion(query);
  if (!q) return response(query, null, RCODE_FORMERR, []);
  if (q.cls !== CLASS_IN) return response(query, q, RCODE_NOTIMP, []);
  if (q.type === TYPE_A) {
    if (!NAME_RE.test(q.name)) return response(query, q, RCODE_NXDOMAIN, []);
    // RFC 6761 §6.3: localhost names are the asker's own loopback, never a fake address that would
    // carry the program to this machine's services through Gatehop (#59).
    if (q.name === 'localhost' || q.name.endsWith('.localhost'))
      return response(query, q, 0, [record(TYPE_A, Buffer.from([127, 0, 0, 1]))]);
    const ip = fake.addressFor(q.name);
    return response(query, q, 0, [record(TYPE_A, Buffer.from(ip.split('.').map(Number)))]);
  }
  if (q.type === TYPE_AAAA || q.type === TYPE_HTTPS || q.type === TYPE_SVCB) return response(query, q, 0, []);
  if (q.type === TYPE_PTR) {
    const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\.in-addr\.arpa$/.exec(q.name);
    const name = m ? fake.nameOf(`${m[4]}.${m[3]}.${m[2]}.${m[1]}`) : null;
    return name ? response(query, q, 0, [record(TYPE_PTR, encodeName(name))]) : response(query, q, RCODE_NXDOMAIN, []);
  }
  return response(query, q, RCODE_NOTIMP, []);
}
