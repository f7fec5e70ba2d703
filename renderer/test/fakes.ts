import type { Actions } from '../src/store/feed.js';
import type { NodeDto, Settings, Status } from '../src/store/types.js';

export function status(over: Partial<Status> = {}): Status {
  return {
    version: '0.1.0',
    uptimeS: 1,
    egress: 'vpngate',
    mode: 'auto',
    pinned: null,
    pinFailed: null,
    active: {
      egressId: 'tunnel-1',
      nodeId: 'n1',
      host: 'n1',
      ip: '203.0.113.1',
      country: 'Japan',
      proto: 'udp',
      protocol: 'openvpn',
      since: 1000,
      state: 'ready',
      rttMs: 12,
      sessions: 1,
      honesty: 'honest',
    },
    draining: [],
    standby: [],
    protocols: { order: ['openvpn', 'sstp'], preferred: null, blocked: null, reason: null, learn: true },
    members: [
      {
        egressId: 'tunnel-1',
        nodeId: 'n1',
        protocol: 'openvpn',
        primary: true,
        host: 'n1',
        ip: '203.0.113.1',
        country: 'Japan',
        since: 1000,
        down: false,
        sessions: 1,
        bytesUp: 0,
        bytesDown: 0,
        rttMs: 12,
        failures: 0,
      },
    ],
    balance: { strategy: 'round-robin', tunnels: 1 },
    sessions: { active: 1, total: 3, rejected: 0 },
    honesty: { enabled: true, honest: 1, flagged: 0, unchecked: 1, checking: 0, lastFlagged: null },
    privacy: { encryptedDns: false, encryptedDnsNext: false, httpsOnly: false },
    traffic: { bytesUp: 0, bytesDown: 0, at: 1000 },
    switches: { total: 1, failed: 0, state: 'idle', inProgress: null, last: null },
    health: null,
    listen: { proxy: '127.0.0.1:1080', admin: '127.0.0.1:9090' },
    network: { state: 'ok', reason: null, since: null, attempts: 0, nextAttemptAt: null },
    eventLoop: { p50Ms: 0.1, p99Ms: 2, maxMs: 5, windowMs: 10_000 },
    tunnels: [
      {
        egressId: 'tunnel-1',
        nodeId: 'n1',
        thread: 'worker',
        heapBytes: 12_000_000,
        wasmMemoryBytes: 33_554_432,
        weakTls: false,
        trustRule: 'public-ca-name',
      },
    ],
    tunnelWorkers: { started: 1, failures: 0, threadsCreated: 2, threadsReused: 0, idleThreads: 1 },
    store: { health: 'ok', incident: null },
    native: {
      loaded: true,
      reason: null,
      heapTrims: 0,
      heapTrimMaxMs: 0,
      dataPath: 'native',
      dataPathReason: null,
      crypto: 'OpenSSL 3.0.19 (the process)',
    },
    list: {
      source: 'https://www.vpngate.net/api/iphone/',
      via: 'direct',
      fetchedAt: 1000,
      nodes: 2,
      refreshing: false,
      skipped: {},
      sources: [
        {
          url: 'https://www.vpngate.net/api/iphone/',
          kind: 'official',
          via: 'direct',
          ok: true,
          error: null,
          at: 1000,
        },
      ],
    },
    reach: { connectBy: 'ip', upstream: null, upstreamUdp: null },
    nodeTest: null,
    exit: null,
    desktop: false,
    routing: {
      mode: 'rule',
      rules: 4,
      custom: false,
      errors: [],
      ruleSets: [],
      routed: { TUNNEL: 3, DIRECT: 1 },
    },
    ...over,
  };
}

/** The core's default settings as the window gets them, with `over` on top. */
export function settings(over: Partial<Settings> = {}): Settings {
  return {
    listen: '127.0.0.1:1080',
    authFile: null,
    countryAllow: [],
    countryDeny: [],
    preferProto: 'any',
    autoSelect: { intervalMs: 180_000, toleranceMs: 50, url: 'http://cp.cloudflare.com/generate_204' },
    drainGraceMs: 600_000,
    protocols: ['openvpn', 'sstp'],
    nodeProtocols: {},
    listSources: [],
    mode: 'rule',
    rules: null,
    ruleProviders: {},
    subRules: {},
    language: 'auto',
    killSwitch: false,
    notifications: { switched: true, lost: true, sysproxyChanged: true },
    startAtLogin: false,
    privacy: { checkNodes: true, checkUrls: null, encryptedDns: false, httpsOnly: false },
    ...over,
  };
}

/** What the honesty checks say of a node: unchecked unless `over` says otherwise. */
export function honesty(over: Partial<NonNullable<NodeDto['honesty']>> = {}): NonNullable<NodeDto['honesty']> {
  return {
    verdict: 'unchecked',
    checkedAt: null,
    evidence: [],
    inconclusive: [],
    accepted: false,
    cleanChecks: 0,
    cleanChecksToClear: 3,
    checking: false,
    durationMs: null,
    bytes: null,
    ...over,
  };
}

export function node(i: number, over: Partial<NodeDto> = {}): NodeDto {
  return {
    id: `node-${i}`,
    host: `public-vpn-${i}`,
    ip: `203.0.113.${i % 250}`,
    port: 443,
    proto: i % 2 ? 'tcp' : 'udp',
    country: i % 3 ? 'Japan' : 'Korea',
    countryCode: i % 3 ? 'JP' : 'KR',
    prior: (i % 10) / 10,
    rttMs: 10 + (i % 37),
    score: 100 - (i % 50),
    scoreTerms: { latency: 1, prior: 2, history: 3, recentFailures: 0 },
    successes: i % 5,
    failures: i % 2,
    lastSuccessAt: null,
    lastFailureAt: null,
    backoffUntil: null,
    urlDelayMs: null,
    state: 'candidate',
    lastListedAt: 1000,
    excluded: null,
    weakTls: false,
    honesty: {
      verdict: i === 2 ? 'honest' : 'unchecked',
      checkedAt: i === 2 ? 1000 : null,
      evidence: [],
      inconclusive: [],
      accepted: false,
      cleanChecks: 0,
      cleanChecksToClear: 3,
      checking: false,
      durationMs: i === 2 ? 2100 : null,
      bytes: i === 2 ? 41_000 : null,
    },
    protocols: [
      { protocol: 'openvpn', tried: 0, worked: 0, lastOk: null, lastError: null, at: null },
      { protocol: 'sstp', tried: 0, worked: 0, lastOk: null, lastError: null, at: null },
    ],
    ...over,
  };
}

/** An EventSource the test drives: open, send named events, fail. */
export class FakeEventSource {
  static all: FakeEventSource[] = [];
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  closed = false;
  readonly listeners = new Map<string, Array<(m: { data: string }) => void>>();
  constructor(readonly url: string) {
    FakeEventSource.all.push(this);
  }
  addEventListener(name: string, fn: (m: { data: string }) => void): void {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), fn]);
  }
  close(): void {
    this.closed = true;
  }
  open(): void {
    for (const fn of this.listeners.get('open') ?? []) fn({ data: '' });
    this.onopen?.();
  }
  send(name: string, data: unknown): void {
    for (const fn of this.listeners.get(name) ?? []) fn({ data: JSON.stringify(data) });
  }
  fail(): void {
    this.onerror?.();
  }
}

/**
 * A core that saves whatever the window sends: `saved` records each patch, and the answer is the
 * default settings (start at login not offered) with the patch on top, nothing to restart.
 */
export function savingCore(): { saved: Array<Partial<Settings>>; saveSettings: Actions['saveSettings'] } {
  const saved: Array<Partial<Settings>> = [];
  return {
    saved,
    saveSettings: async (patch) => {
      saved.push(patch);
      return { ok: true, value: { settings: settings({ startAtLogin: null, ...patch }), restartRequired: [] } };
    },
  };
}
