import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { EgressTcpConnection } from '../../core/contracts/index.js';
import type { Decision } from '../../core/rules/index.js';
import { openFlow, type FlowReplies, type FlowRequest, type FlowSteps } from '../../core/proxy/open-flow.js';

const HELLO = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00]);

/** The pipeline's steps, recorded in order; the rules answer `target`. */
function steps(target: Decision['target'], o: { sniffs?: boolean; httpsOnly?: boolean; dialFails?: boolean } = {}) {
  const log: string[] = [];
  const s: FlowSteps = {
    closed: () => log.includes('close'),
    router: { sniffs: () => o.sniffs ?? false, httpsOnly: () => o.httpsOnly ?? false },
    route: (host, port, name) => {
      log.push(`route ${host}:${port}${name ? ` ${name}` : ''}`);
      return Promise.resolve({ target, rule: 'MATCH', payload: '' } as unknown as Decision);
    },
    checkFirstBytes: (_client, first) => {
      log.push(`judge ${first.length}`);
      return Promise.resolve(first[0] === 0x16 ? first : null);
    },
    dial: (host, port, via) => {
      log.push(`dial ${via} ${host}:${port}`);
      if (o.dialFails) return Promise.reject(new Error('refused'));
      return Promise.resolve({
        stream: new PassThrough(),
        localAddress: '10.0.0.2',
        localPort: 4000,
      } as unknown as EgressTcpConnection);
    },
    sendAhead: (_conn, bytes) => void log.push(`ahead ${bytes.length}`),
    relay: (_client, _upstream, retry) => void log.push(`relay${retry ? ' movable' : ''}`),
    close: (reason) => void log.push('close', reason),
  };
  return { s, log };
}

function replies(log: string[], o: { told?: boolean; http?: boolean } = {}): FlowReplies {
  return {
    ...(o.told ? {} : { connected: (c) => void log.push(`connected ${c ? c.localPort : 'early'}`) }),
    refused: (why) => void log.push(`refused ${why.kind}`),
    ...(o.http ? { carry: () => void log.push('carry') } : {}),
  };
}

const bytes = (over: Partial<Extract<FlowRequest, { carries: 'bytes' }>> = {}): FlowRequest => ({
  carries: 'bytes',
  client: new PassThrough(),
  host: 'example.com',
  port: 443,
  named: true,
  early: Buffer.alloc(0),
  ...over,
});

describe('openFlow: one pipeline for every front end', () => {
  it('a named flow is decided, dialled, then the client is told "connected" with the upstream, and relayed movable', async () => {
    const { s, log } = steps('TUNNEL');
    await openFlow(s, bytes(), replies(log));
    expect(log).toEqual(['route example.com:443', 'dial TUNNEL example.com:443', 'connected 4000', 'relay movable']);
  });

  it('bytes the client sent early go on first and pin the flow to its egress', async () => {
    const { s, log } = steps('DIRECT');
    await openFlow(s, bytes({ early: Buffer.from('GET') }), replies(log));
    expect(log).toEqual(['route example.com:443', 'dial DIRECT example.com:443', 'connected 4000', 'ahead 3', 'relay']);
  });

  it('a REJECT before the client was told anything is a refusal in its protocol; nothing is dialled', async () => {
    const { s, log } = steps('REJECT');
    await openFlow(s, bytes(), replies(log));
    expect(log).toEqual(['route example.com:443', 'refused rule']);
  });

  it('an address on a sniffed port: "connected" first, the first bytes name the flow, and a REJECT then closes it', async () => {
    const { s, log } = steps('REJECT', { sniffs: true });
    const client = new PassThrough();
    client.write(HELLO);
    await openFlow(s, bytes({ client, host: '192.0.2.1', named: false }), replies(log));
    expect(log).toEqual(['connected early', 'route 192.0.2.1:443', 'close', 'rule-reject']);
  });

  it('HTTPS-only through a node: "connected" before the first bytes, judged before any dial; not TLS is never dialled', async () => {
    const ok = steps('TUNNEL', { httpsOnly: true });
    await openFlow(ok.s, bytes({ early: HELLO }), replies(ok.log));
    expect(ok.log).toEqual([
      'route example.com:443',
      'connected early',
      'judge 10',
      'dial TUNNEL example.com:443',
      'ahead 10',
      'relay',
    ]);
    const plain = steps('TUNNEL', { httpsOnly: true });
    await openFlow(plain.s, bytes({ early: Buffer.from('GET / HTTP/1.1\r\n\r\n') }), replies(plain.log));
    expect(plain.log).toEqual(['route example.com:443', 'connected early', 'judge 18']);
  });

  it('a plain HTTP request through a node under HTTPS-only is refused as such, never dialled; DIRECT ones are carried by the front end', async () => {
    const node = steps('TUNNEL', { httpsOnly: true });
    await openFlow(node.s, { carries: 'http', host: 'example.com', port: 80 }, replies(node.log, { http: true }));
    expect(node.log).toEqual(['route example.com:80', 'refused https-only']);
    const direct = steps('DIRECT', { httpsOnly: true });
    await openFlow(direct.s, { carries: 'http', host: 'example.com', port: 80 }, replies(direct.log, { http: true }));
    expect(direct.log).toEqual(['route example.com:80', 'dial DIRECT example.com:80', 'carry']);
  });

  it('a failed dial is a refusal before "connected" and a close after it (a captured program was told by its stack)', async () => {
    const before = steps('TUNNEL', { dialFails: true });
    await openFlow(before.s, bytes(), replies(before.log));
    expect(before.log).toEqual(['route example.com:443', 'dial TUNNEL example.com:443', 'refused failed']);
    const captured = steps('TUNNEL', { dialFails: true });
    await openFlow(captured.s, bytes(), replies(captured.log, { told: true }));
    expect(captured.log).toEqual(['route example.com:443', 'dial TUNNEL example.com:443', 'close', 'connect-failed']);
  });
});
