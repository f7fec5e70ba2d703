import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseLsof, parseNetstatPid, parseTasklistName, processLookup } from '../../core/router/index.js';

/**
 * PROCESS-NAME on Windows and macOS (#33), against the tools' documented outputs (as the system
 * proxy's backends are tested): netstat -ano and tasklist /FO CSV on Windows, lsof -F and ps on macOS.
 */
const NETSTAT = `
Active Connections

  Proto  Local Address          Foreign Address        State           PID
  TCP    0.0.0.0:135            0.0.0.0:0              LISTENING       1020
  TCP    127.0.0.1:1080         0.0.0.0:0              LISTENING       7312
  TCP    127.0.0.1:1080         127.0.0.1:52344        ESTABLISHED     7312
  TCP    127.0.0.1:52344        127.0.0.1:1080         ESTABLISHED     4242
  TCP    [::1]:52400            [::1]:1080             ESTABLISHED     5150
`;
const TASKLIST = '"curl.exe","4242","Console","1","8,116 K"\r\n';
const LSOF = [
  'p7312',
  'cnode',
  'n127.0.0.1:1080',
  'n127.0.0.1:1080->127.0.0.1:52344',
  'p4242',
  'ccurl',
  'n127.0.0.1:52344->127.0.0.1:1080',
  '',
].join('\n');

const client = { remoteAddress: '127.0.0.1', remotePort: 52344, localAddress: '127.0.0.1', localPort: 1080 } as Socket;

describe('the program behind a connection on Windows and macOS (#33)', () => {
  it('netstat: the PID owning the client end, not the proxy’s own end; IPv6 in brackets', () => {
    expect(parseNetstatPid(NETSTAT, '127.0.0.1:52344', '127.0.0.1:1080')).toBe(4242);
    expect(parseNetstatPid(NETSTAT, '[::1]:52400', '[::1]:1080')).toBe(5150);
    expect(parseNetstatPid(NETSTAT, '127.0.0.1:1', '127.0.0.1:1080')).toBeNull();
  });

  it('tasklist: the image name, or nothing when no task has that PID', () => {
    expect(parseTasklistName(TASKLIST)).toBe('curl.exe');
    expect(parseTasklistName('INFO: No tasks are running which match the specified criteria.\r\n')).toBeNull();
  });

  it('lsof -F: the process whose entry is client->proxy', () => {
    expect(parseLsof(LSOF, '127.0.0.1:52344', '127.0.0.1:1080')).toEqual({ pid: 4242, command: 'curl' });
    expect(parseLsof(LSOF, '127.0.0.1:9', '127.0.0.1:1080')).toBeNull();
  });

  it('the Windows and macOS lookups run those tools with those arguments and answer name and path', async () => {
    const calls: string[] = [];
    const win = processLookup('win32', (file, args) => {
      calls.push([file, ...args].join(' '));
      return Promise.resolve(file === 'netstat' ? NETSTAT : TASKLIST);
    })!;
    expect(await win(client)).toEqual({ name: 'curl.exe', path: '' });
    expect(calls).toEqual(['netstat -ano -p TCP', 'tasklist /FI PID eq 4242 /FO CSV /NH']);
    const mac = processLookup('darwin', (file) => Promise.resolve(file === 'lsof' ? LSOF : '/usr/bin/curl\n'))!;
    expect(await mac(client)).toEqual({ name: 'curl', path: '/usr/bin/curl' });
  });
});

describe.skipIf(process.platform !== 'linux')(
  'PROCESS-NAME on Linux: found once per connection, recent programs first (#45 review)',
  () => {
    it('a second connection from the same program is found without walking every process; a socket asked twice is looked up once', async () => {
      const { createServer, connect } = await import('node:net');
      const accepted: Socket[] = [];
      const server = createServer((s) => accepted.push(s));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const port = (server.address() as { port: number }).port;
      const clients = [connect(port, '127.0.0.1'), connect(port, '127.0.0.1')];
      try {
        await Promise.all(clients.map((c) => new Promise((r) => c.once('connect', r))));
        while (accepted.length < 2) await new Promise((r) => setTimeout(r, 10));
        const stats = { fullWalks: 0, recentHits: 0 };
        const lookup = processLookup('linux', undefined, stats)!;
        const first = await lookup(accepted[0]!);
        expect(first?.path).toBe(process.execPath);
        expect(stats).toEqual({ fullWalks: 1, recentHits: 0 });
        expect(await lookup(accepted[1]!)).toEqual(first);
        expect(stats).toEqual({ fullWalks: 1, recentHits: 1 });
        // The same connection asked again (another rule, the next request on a keep-alive connection).
        expect(await lookup(accepted[0]!)).toEqual(first);
        expect(stats).toEqual({ fullWalks: 1, recentHits: 1 });
      } finally {
        for (const c of [...clients, ...accepted]) c.destroy();
        await new Promise<void>((r) => server.close(() => r()));
      }
    });
  },
);
