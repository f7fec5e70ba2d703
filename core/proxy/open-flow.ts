import assert from 'node:assert/strict';
import type { Duplex } from 'node:stream';
import type { EgressTcpConnection } from '../contracts/index.js';
import type { Decision } from '../rules/index.js';
import type { Router } from '../router/index.js';
import { sniffName } from '../router/index.js';
import { readFirstBytes } from './first-bytes.js';

/** A TCP flow a front end was asked to open, its protocol's parsing done. */
export type FlowRequest = StreamFlow | HttpFlow;

/** An opaque byte stream, relayed: sniffed, and judged by privacy.httpsOnly through a node. */
export interface StreamFlow {
  carries: 'bytes';
  /** The client's side: its bytes wait there (paused) until the flow is relayed. */
  client: Duplex;
  host: string;
  port: number;
  /**
   * The client named its destination (a SOCKS5 domain, a captured program's fake address): nothing
   * to sniff. An address on a port the rules sniff is named by its first bytes.
   */
  named: boolean;
  /** What the client sent already (after a SOCKS5 request, a CONNECT's head): sent on first. */
  early: Buffer;
}

/** One plain HTTP request or upgrade, named by its URL, that the front end forwards itself (`carry`). */
export interface HttpFlow {
  carries: 'http';
  host: string;
  port: number;
}

/** Why a flow was refused before its client was told it is connected. */
export type FlowRefusal =
  { kind: 'rule'; decision: Decision } | { kind: 'https-only' } | { kind: 'failed'; error: Error };

/** A front end's replies: the only protocol-specific part of opening a flow. */
export interface FlowReplies {
  /**
   * Tells the client it is connected: with the upstream once dialled, or null when said before (a
   * sniff or the HTTPS-only check needs the client's first bytes, which come only after it).
   * Omitted when the client was told before the request reached us (a captured program).
   */
  connected?: (conn: EgressTcpConnection | null) => void;
  /**
   * Refused before `connected`: the client hears why, in its protocol (after it, the session just
   * closes). Needed unless `connected` is omitted.
   */
  refused?: (why: FlowRefusal) => void;
  /** An 'http' flow's upstream, connected: the front end forwards the request. */
  carry?: (conn: EgressTcpConnection) => void;
}

/** What the pipeline asks of the session that owns the flow (ProxySession). */
export interface FlowSteps {
  closed(): boolean;
  readonly router: Pick<Router, 'sniffs' | 'httpsOnly'>;
  route(host: string, port: number, sniffedName: string | null): Promise<Decision>;
  /** privacy.httpsOnly on a tunnel flow: the first bytes if they are a TLS ClientHello, else null (refused). */
  checkFirstBytes(client: Duplex, first: Buffer): Promise<Buffer | null>;
  dial(host: string, port: number, via: 'TUNNEL' | 'DIRECT'): Promise<EgressTcpConnection>;
  /** Sends bytes the client sent before the upstream existed, counted as up bytes. */
  sendAhead(conn: EgressTcpConnection, bytes: Buffer): void;
  /** Relays; with `retryTarget`, a flow that has moved nothing may be re-dialled at a switch. */
  relay(client: Duplex, upstream: Duplex, retryTarget?: { host: string; port: number }): void;
  close(reason: string, err?: Error): void;
}

/**
 * The one way a flow is opened, whatever the front end (SOCKS5, HTTP CONNECT and plain requests,
 * captured programs): sniff a name if the rules need one, decide, refuse (REJECT, HTTPS-only), dial
 * on the decision's egress, then relay or hand over. A front end parses its protocol and says its
 * replies; the order of the steps, what the client may send before a node sees anything, and how a
 * failure ends are the same for all of them.
 */
export async function openFlow(s: FlowSteps, req: FlowRequest, replies: FlowReplies): Promise<void> {
  const { host, port } = req;
  assert(replies.connected === undefined || replies.refused, 'a client to be told "connected" can be told "refused"');
  assert(req.carries === 'bytes' || (replies.carry && replies.refused), "an 'http' flow is carried by its front end");
  // A captured program was told by the gateway's stack; an 'http' flow's answer is its response.
  let told = req.carries === 'bytes' && replies.connected === undefined;
  const tell = (conn: EgressTcpConnection | null): void => {
    if (told) return;
    told = true;
    replies.connected!(conn);
  };
  // After "connected" a refusal can only close the connection: the client's protocol has no other word left.
  const refuse = (why: FlowRefusal, reason: string): void => {
    if (!told) replies.refused!(why);
    else s.close(reason, why.kind === 'failed' ? why.error : undefined);
  };
  let first = req.carries === 'bytes' ? req.early : Buffer.alloc(0);
  try {
    let name: string | null = null;
    // Addressed by IP while rules match names: the name comes from the first bytes, so the client
    // is told "connected" first (as mihomo's sniffer does), and a failure after that closes it.
    if (req.carries === 'bytes' && !req.named && s.router.sniffs(port)) {
      tell(null);
      first = await readFirstBytes(req.client, first);
      if (s.closed()) return;
      const sniffed = sniffName(first);
      name = sniffed && 'name' in sniffed ? sniffed.name : null;
    }
    const decision = await s.route(host, port, name);
    if (s.closed()) return;
    if (decision.target === 'REJECT') return refuse({ kind: 'rule', decision }, 'rule-reject');
    // HTTPS only through a volunteer node: the first bytes are judged before anything, a connect
    // included, reaches the node. A plain HTTP request is plain by definition.
    if (decision.target === 'TUNNEL' && s.router.httpsOnly()) {
      if (req.carries === 'http') return refuse({ kind: 'https-only' }, 'https-only');
      tell(null);
      const checked = await s.checkFirstBytes(req.client, first);
      if (checked === null || s.closed()) return;
      first = checked;
    }
    const conn = await s.dial(host, port, decision.target);
    if (s.closed()) return;
    if (req.carries === 'http') return replies.carry!(conn);
    tell(conn);
    if (first.length > 0) s.sendAhead(conn, first);
    // Bytes already sent upstream pin the flow to this egress; otherwise it may still move.
    s.relay(req.client, conn.stream, first.length > 0 ? undefined : { host, port });
    req.client.resume();
  } catch (err) {
    if (!s.closed()) refuse({ kind: 'failed', error: err as Error }, 'connect-failed');
  }
}
