import { execFileSync } from 'node:child_process';
/**
 * One fuzz target per parser that takes bytes from outside Gatehop: what a SOCKS/HTTP client, a
 * list site, a mirror page, an OpenVPN or SSTP server, a config file, settings.json or an admin
 * API caller can send. Each run either returns or throws the parser's own coded refusal; any other
 * throw, a hang, or a broken invariant is a finding. Inputs are valid seeds mutated (mutate.ts)
 * and plain random bytes.
 */
import { randomBytes } from 'node:crypto';
import { connect, isIP } from 'node:net';
import fc from 'fast-check';
import { ZodError } from 'zod';
import { ErrorCodes, GatehopError, HttpFraming, isGatehopError, silentLogger } from '../../core/common/index.js';
import { parseSocks5Udp } from '../../core/reach/index.js';
import { operations } from '../../core/api/contract.js';
import { ApiFailure, parseJsonBody } from '../../core/api/http-util.js';
import { buildConfig } from '../../core/app/index.js';
import { parseConfigText } from '../../core/app/config.js';
import { parseSettingsText } from '../../core/app/settings-file.js';
import { SingleEgressSource } from '../../core/egress/index.js';
import type { Egress } from '../../core/contracts/index.js';
import {
  DataChannel,
  dataEngineStatus,
  decodeControl,
  encodeControl,
  Op,
  parseProfile,
  parsePushOptions,
  parseServerKeyMethod2,
  sliceKey2,
  TcpRecordReader,
  tlsAuthWrapper,
  tlsCryptWrapper,
  type DataEngine,
} from '../../core/ovpn/index.js';
import { ReliableChannel } from '../../core/ovpn/reliable.js';
import {
  parseAuthority,
  parseBasicAuth,
  ProxyServer,
  proxyOptionsSchema,
  socks5Codec,
  stripHopByHop,
} from '../../core/proxy/index.js';
import { judgeFirstBytes } from '../../core/proxy/https-only.js';
import {
  decodeCp,
  decodeFrame,
  decodeOptions,
  decodePacket,
  encodeControl as encodeSstpControl,
  encodeCp,
  encodeData,
  encodeFrame,
  encodeOptions,
  SstpReader,
} from '../../core/sstp/index.js';
import { parseMirrorDirectory, parseVpnGateCsv } from '../../core/vpngate/index.js';
import { directoryHtml } from '../helpers/list-site.js';
import { vpnGateCsv, vpnGateProfile } from '../helpers/vpngate-fixtures.js';
import { clientHello } from '../helpers/tls-hello.js';
import { sniffName } from '../../core/router/index.js';
import {
  GeoSite,
  parseRuleLines,
  parseRuleSet,
  readClashConfig,
  readMrsPayload,
  retarget,
  RuleParseError,
  RuleTable,
} from '../../core/rules/index.js';
import {
  BlockReader,
  encodeBlocks,
  encodeKeepAlive,
  MAX_FRAME,
  Pack,
  parseResponseHead,
} from '../../core/softether/index.js';
import { bytesLike, mutatedFrom, textLike } from './mutate.js';
import { parseDohAnswer } from '../../core/netstack/index.js';
import { parseCheckResponse } from '../../core/honesty/index.js';
import { parseExit } from '../../core/app/exit-check.js';
import { parseResolver } from '../../core/app/leak-test.js';
import { answerQuery, FakeIps, Gateway } from '../../core/capture/index.js';
import type { CaptureInbound } from '../../core/contracts/index.js';
import { buildUdp, writeIpv4Header } from '../../core/capture/ipv4-packet.js';
import { writeGeoSite } from '../helpers/geosite-writer.js';
import { mrsChainBombPayload, writeMrsDomains, writeMrsRanges } from '../helpers/mrs-writer.js';

export interface FuzzTarget<T = unknown> {
  name: string;
  /** What the parser reads, and from whom. */
  what: string;
  input: fc.Arbitrary<T>;
  run(input: T): void | Promise<void>;
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
  /** A target over real sockets is slower: the by-hand run caps its inputs at this. */
  maxRuns?: number;
}

/** A finding: the parser broke a promise it makes about any input. */
export class Finding extends Error {}

function must(ok: boolean, what: string): void {
  if (!ok) throw new Finding(what);
}

/** Runs `fn`; a throw that `expected` accepts is the parser refusing the input, anything else is a finding. */
function refuses(fn: () => unknown, expected: (err: unknown) => boolean): void {
  try {
    fn();
  } catch (err) {
    if (err instanceof Finding || !expected(err)) throw err;
  }
}

const coded = (code: string) => (err: unknown) => isGatehopError(err) && err.code === code;

// ---------------------------------------------------------------- SOCKS5 and HTTP front end

const sid = Buffer.from('0102030405060708', 'hex');
const socksSeeds = [
  Buffer.of(5, 2, 0, 2),
  Buffer.concat([Buffer.of(1, 5), Buffer.from('alice'), Buffer.of(6), Buffer.from('secret')]),
  Buffer.of(5, 1, 0, 1, 10, 0, 0, 1, 0, 80),
  Buffer.concat([Buffer.of(5, 1, 0, 3, 11), Buffer.from('example.org'), Buffer.of(1, 187)]),
  Buffer.concat([Buffer.of(5, 3, 0, 4), Buffer.alloc(16, 0xfe), Buffer.of(0, 53)]),
  Buffer.concat([Buffer.of(0, 0, 0, 1, 8, 8, 8, 8, 0, 53), Buffer.from('dns query')]),
];

const socks5Heads: FuzzTarget<Buffer> = {
  name: 'socks5-heads',
  what: 'SOCKS5 greeting, RFC 1929 username/password, request and UDP header, both sides (socks5-codec, common socks5-wire)',
  input: bytesLike(socksSeeds, 300),
  run(b) {
    for (const parse of [
      socks5Codec.parseGreeting,
      socks5Codec.parseUserPass,
      socks5Codec.parseRequest,
      socks5Codec.parseUdpHeader,
    ]) {
      const r = parse(b);
      must(
        r.kind === 'ok' || r.kind === 'incomplete' || r.kind === 'malformed',
        `${parse.name}: kind ${String((r as { kind: unknown }).kind)}`,
      );
      if (r.kind === 'ok')
        must(r.consumed > 0 && r.consumed <= b.length, `${parse.name}: consumed ${r.consumed} of ${b.length}`);
    }
    // The client side of the same codec (core/common socks5-wire): what an upstream's UDP relay sends.
    const u = parseSocks5Udp(b);
    if (u) must(u.data.length <= b.length && u.port >= 0 && u.port <= 65535, 'parseSocks5Udp: out of bounds');
  },
};

const httpHeaderSeeds = [
  'example.org:443',
  '[2001:db8::1]:8443',
  'Basic YWxpY2U6d29uZGVyIGxhbmQ6MQ==',
  'keep-alive, Upgrade',
  'host:80',
];

const httpHeaders: FuzzTarget<string[]> = {
  name: 'http-headers',
  what: 'CONNECT authority, Proxy-Authorization Basic and hop-by-hop headers (core/proxy http-headers)',
  input: fc.array(textLike(httpHeaderSeeds, 200), { minLength: 1, maxLength: 8 }),
  run(values) {
    for (const v of values) {
      const a = parseAuthority(v);
      if (a)
        must(
          Number.isInteger(a.port) && a.port >= 1 && a.port <= 65535 && a.host.length > 0,
          `parseAuthority(${JSON.stringify(v)}) = ${JSON.stringify(a)}`,
        );
      const auth = parseBasicAuth(v);
      if (auth) must(typeof auth.username === 'string' && typeof auth.password === 'string', 'parseBasicAuth shape');
    }
    const raw = values.flatMap((v, i) => [i % 2 ? 'Connection' : `X-${i}`, v]);
    const out = stripHopByHop(raw);
    must(out.length % 2 === 0 && out.length <= raw.length, 'stripHopByHop keeps name/value pairs');
  },
};

/** An egress that refuses every connection: the wire target fuzzes the front end, and must never reach out. */
function refusingEgress(): Egress {
  const no = async (): Promise<never> => {
    throw new GatehopError(ErrorCodes.EGRESS_NOT_ALLOWED, 'fuzz: this egress connects nowhere');
  };
  return {
    id: 'refusing',
    state: 'ready',
    stats: { bytesUp: 0, bytesDown: 0, sessionsActive: 0, sessionsTotal: 0, failures: 0 },
    connectTcp: no,
    bindUdp: no,
    resolve: no,
    close: async () => {},
  } as unknown as Egress;
}

const wireSeeds = [
  Buffer.concat([Buffer.of(5, 1, 0), Buffer.of(5, 1, 0, 3, 11), Buffer.from('example.org'), Buffer.of(0, 80)]),
  Buffer.concat([
    Buffer.of(5, 1, 2),
    Buffer.of(1, 5),
    Buffer.from('alice'),
    Buffer.of(1, 0x78),
    Buffer.of(5, 3, 0, 1, 0, 0, 0, 0, 0, 0),
  ]),
  Buffer.from('CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\nProxy-Authorization: Basic YTpi\r\n\r\n'),
  Buffer.from(
    'GET http://example.org/a?b=c HTTP/1.1\r\nHost: example.org\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\nContent-Length: 5\r\n\r\nhello',
  ),
  Buffer.from('POST http://[2001:db8::1]:8080/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'),
];

let wire: { server: ProxyServer; port: number } | null = null;

const proxyWire: FuzzTarget<Buffer> = {
  name: 'proxy-wire',
  what: 'whole SOCKS5 and HTTP heads over a real socket into the real ProxyServer (sniffing, llhttp, sessions)',
  input: bytesLike(wireSeeds, 600),
  async setup() {
    const server = new ProxyServer(
      { ...proxyOptionsSchema.parse({ host: '127.0.0.1', port: 0, handshakeTimeoutMs: 2_000 }), credentials: null },
      new SingleEgressSource(refusingEgress()),
      silentLogger(),
    );
    wire = { server, port: (await server.listen()).port };
  },
  async teardown() {
    await wire?.server.close();
    wire = null;
  },
  async run(b) {
    const s = connect(wire!.port, '127.0.0.1');
    s.on('data', () => undefined);
    await new Promise<void>((resolve, reject) => {
      // The proxy must answer and close, or close, every head it is sent and then the client's EOF.
      const hang = setTimeout(
        () => (
          s.destroy(),
          reject(
            new Finding(
              `the proxy kept the connection open 5 s after ${b.length} bytes and EOF: ${b.subarray(0, 80).toString('hex')}`,
            ),
          )
        ),
        5_000,
      );
      s.once('close', () => (clearTimeout(hang), resolve()));
      s.once('error', () => undefined);
      s.end(b);
    });
  },
};

// ---------------------------------------------------------------- VPN Gate list and mirrors

const csvSeed = vpnGateCsv([
  { host: 'public-vpn-1', ip: '203.0.113.1' },
  {
    host: 'vpn2',
    ip: '198.51.100.7',
    country: ['Korea Republic of', 'KR'],
    profile: vpnGateProfile('198.51.100.7', 1194, 'udp'),
  },
  { host: 'weird,name', ip: '2001:db8::5', score: 'x' },
]);

const vpngateCsv: FuzzTarget<string> = {
  name: 'vpngate-csv',
  what: 'the VPN Gate list (CSV with base64 OpenVPN profiles) from vpngate.net, a mirror or a user source',
  input: textLike([csvSeed], 4096),
  run(text) {
    refuses(() => {
      const r = parseVpnGateCsv(text);
      for (const n of r.nodes)
        must(
          n.port >= 1 && n.port <= 65535 && n.id.length > 0 && (n.proto === 'tcp' || n.proto === 'udp'),
          `node ${JSON.stringify(n.id)} port ${n.port} proto ${n.proto}`,
        );
    }, coded(ErrorCodes.LIST_INVALID));
  },
};

const dirSeed = directoryHtml([
  { origin: 'http://203.0.113.9:8080', location: 'Japan' },
  { origin: 'https://198.51.100.3' },
]);

const mirrorDirectory: FuzzTarget<string> = {
  name: 'mirror-directory',
  what: "VPN Gate's mirror directory page (HTML) from any site that answers",
  input: textLike([dirSeed], 4096),
  run(html) {
    for (const url of parseMirrorDirectory(html, 'https://www.vpngate.net/en/sites.aspx'))
      must(/^https?:\/\/[^/]+\/api\/iphone\/$/.test(url), `mirror URL ${url}`);
  },
};

// ---------------------------------------------------------------- OpenVPN

const profileSeeds = [
  vpnGateProfile('203.0.113.1', 443, 'tcp'),
  vpnGateProfile('203.0.113.2', 1194, 'udp', [
    'tls-crypt [inline]',
    'compress lz4-v2',
    'data-ciphers AES-256-GCM:AES-128-GCM',
  ]),
];

const ovpnProfile: FuzzTarget<string> = {
  name: 'ovpn-profile',
  what: 'an OpenVPN profile (from the list, a user file or --ovpn)',
  input: textLike(profileSeeds, 4096),
  run(text) {
    refuses(() => {
      const p = parseProfile(text);
      for (const r of p.remotes) must(r.port >= 1 && r.port <= 65535, `remote port ${r.port}`);
    }, coded(ErrorCodes.PROFILE_INVALID));
  },
};

const controlSeeds = [
  encodeControl({
    opcode: Op.CONTROL_HARD_RESET_SERVER_V2,
    keyId: 0,
    sessionId: sid,
    acks: [0],
    peerSessionId: sid,
    messageId: 0,
    payload: Buffer.alloc(0),
  }),
  encodeControl({
    opcode: Op.CONTROL_V1,
    keyId: 0,
    sessionId: sid,
    acks: [1, 2, 3],
    peerSessionId: sid,
    messageId: 7,
    payload: randomBytes(100),
  }),
  encodeControl({
    opcode: Op.ACK_V1,
    keyId: 1,
    sessionId: sid,
    acks: [4],
    peerSessionId: sid,
    messageId: null,
    payload: Buffer.alloc(0),
  }),
];

const ovpnControl: FuzzTarget<Buffer> = {
  name: 'ovpn-control',
  what: 'OpenVPN control and ack packets from the server (core/ovpn packet)',
  input: bytesLike(controlSeeds, 300),
  run(b) {
    const p = decodeControl(b);
    if (!p) return;
    must(p.acks.length <= 8 && p.sessionId.length === 8, 'control packet shape');
    // What was read writes back to bytes that read the same.
    const again = decodeControl(encodeControl(p));
    must(
      !!again && again.opcode === p.opcode && again.messageId === p.messageId && again.payload.equals(p.payload),
      'control packet round trip',
    );
  },
};

const keyMethodSeeds = [
  Buffer.concat([
    Buffer.alloc(4),
    Buffer.of(2),
    randomBytes(64),
    Buffer.of(0, 20),
    Buffer.from('V4,dev-type tun,...\0'),
    Buffer.of(0, 0),
  ]),
];
const pushSeeds = [
  'PUSH_REPLY,route-gateway 10.211.254.254,topology subnet,ping 10,ping-restart 60,dhcp-option DNS 10.211.254.254,ifconfig 10.211.1.23 255.255.0.0,peer-id 3,cipher AES-128-GCM',
  'PUSH_REPLY,push-continuation 2,ifconfig 10.8.0.2 10.8.0.1',
];

const ovpnMessages: FuzzTarget<[Buffer, string]> = {
  name: 'ovpn-tls-messages',
  what: 'TLS-carried control messages: the key-method-2 reply and PUSH_REPLY options (core/ovpn control-messages)',
  input: fc.tuple(bytesLike(keyMethodSeeds, 400), textLike(pushSeeds, 1024)),
  run([km, push]) {
    parseServerKeyMethod2(km);
    const p = parsePushOptions(push);
    must(Array.isArray(p.dns), 'push options dns');
  },
};

/** The server's channel, and the client's on each data engine this process has (native where built, and JavaScript). */
function dataPair(cipher: string, auth: string | null): [DataChannel, DataChannel[]] {
  const client = sliceKey2(randomBytes(256));
  const server = {
    encryptCipher: client.decryptCipher,
    encryptHmac: client.decryptHmac,
    decryptCipher: client.encryptCipher,
    decryptHmac: client.encryptHmac,
  };
  const engines: DataEngine[] = dataEngineStatus().engine === 'native' ? ['native', 'javascript'] : ['javascript'];
  return [
    new DataChannel(cipher, auth, server, 0, null),
    engines.map((e) => new DataChannel(cipher, auth, client, 0, null, e)),
  ];
}

const [cbcServer, cbcClients] = dataPair('AES-128-CBC', 'SHA1');
const [gcmServer, gcmClients] = dataPair('AES-256-GCM', null);
const dataSeeds = [
  ...Array.from({ length: 4 }, (_, i) => cbcServer.encrypt(randomBytes(20 + i * 200))),
  ...Array.from({ length: 4 }, (_, i) => gcmServer.encrypt(randomBytes(20 + i * 200))),
];
const dataSeedHex = new Set(dataSeeds.map((d) => d.toString('hex')));

const ovpnData: FuzzTarget<Buffer> = {
  name: 'ovpn-data',
  what: 'OpenVPN data packets from the server (AES-CBC+HMAC and AES-GCM, core/ovpn data-channel, native and JavaScript engines)',
  input: bytesLike(dataSeeds, 1600),
  run(b) {
    for (const ch of [...cbcClients, ...gcmClients]) {
      const plain = ch.decrypt(b);
      // Only the very packets the server sent authenticate; a changed byte anywhere is dropped.
      must(
        plain === null || dataSeedHex.has(b.toString('hex')),
        `a forged data packet decrypted: ${b.subarray(0, 40).toString('hex')}`,
      );
    }
  },
};

const staticKey = randomBytes(256);
const cryptServer = tlsCryptWrapper(Buffer.concat([staticKey.subarray(128), staticKey.subarray(0, 128)]));
const cryptClient = tlsCryptWrapper(staticKey);
const authServer = tlsAuthWrapper(staticKey, 0, 'SHA256');
const authClient = tlsAuthWrapper(staticKey, 1, 'SHA256');
const wrapSeeds = [...controlSeeds.map((c) => cryptServer.wrap(c)), ...controlSeeds.map((c) => authServer.wrap(c))];
const wrapSeedHex = new Set(wrapSeeds.map((w) => w.toString('hex')));

const ovpnWrap: FuzzTarget<Buffer> = {
  name: 'ovpn-tls-wrap',
  what: 'tls-crypt and tls-auth wrapped control packets (core/ovpn control-wrap)',
  input: bytesLike(wrapSeeds, 400),
  run(b) {
    for (const w of [cryptClient, authClient]) {
      const plain = w.unwrap(b);
      must(
        plain === null || wrapSeedHex.has(b.toString('hex')),
        `a forged wrapped packet was accepted: ${b.subarray(0, 40).toString('hex')}`,
      );
    }
  },
};

const tcpSeeds = [
  Buffer.concat(controlSeeds.map((c) => Buffer.concat([Buffer.of(c.length >> 8, c.length & 0xff), c]))),
];

const ovpnTcpRecords: FuzzTarget<Buffer[]> = {
  name: 'ovpn-tcp-records',
  what: 'the OpenVPN-over-TCP stream, in any chunking (core/ovpn TcpRecordReader)',
  input: fc.array(bytesLike(tcpSeeds, 200), { minLength: 1, maxLength: 6 }),
  run(chunks) {
    const r = new TcpRecordReader(2048);
    refuses(() => {
      for (const c of chunks)
        for (const rec of r.push(c)) must(rec.length >= 1 && rec.length <= 2048, `record of ${rec.length} bytes`);
    }, coded(ErrorCodes.OVPN_PROTOCOL));
  },
};

const ovpnReliable: FuzzTarget<Array<[number, number[]]>> = {
  name: 'ovpn-reliable',
  what: "the control channel's reliability layer: message ids and acks as the server sends them (core/ovpn reliable)",
  input: fc.array(
    fc.tuple(
      fc.oneof({ weight: 6, arbitrary: fc.nat({ max: 40 }) }, { weight: 1, arbitrary: fc.nat({ max: 0xffffffff }) }),
      fc.array(fc.oneof(fc.nat({ max: 40 }), fc.nat({ max: 0xffffffff })), { maxLength: 4 }),
    ),
    { maxLength: 100 },
  ),
  run(steps) {
    const rel = new ReliableChannel({ sendWindow: 4, transmit: () => {} });
    rel.acceptReset(0);
    let next = 1;
    for (const [id, acks] of steps) {
      for (const out of rel.receive(id, Buffer.from(`m${id}`))) {
        must(out.toString() === `m${next}`, `delivered ${out.toString()} when m${next} was due`);
        next++;
      }
      rel.acknowledged(acks);
      must(rel.buffered <= 16, `held ${rel.buffered} messages back`);
    }
    rel.close();
  },
};

// ---------------------------------------------------------------- SSTP and PPP

const sstpSeeds = [
  encodeSstpControl(1, [{ id: 1, value: Buffer.of(0, 1) }]),
  encodeSstpControl(4, [{ id: 3, value: Buffer.concat([Buffer.alloc(3), Buffer.of(3), randomBytes(32)]) }]),
  encodeData(
    encodeFrame(
      0xc021,
      encodeCp(
        1,
        1,
        encodeOptions([
          { type: 1, value: Buffer.of(5, 0xdc) },
          { type: 5, value: randomBytes(4) },
        ]),
      ),
    ),
  ),
];

const sstpPackets: FuzzTarget<Buffer[]> = {
  name: 'sstp-packets',
  what: 'SSTP packets from the server, in any chunking (core/sstp SstpReader, decodePacket)',
  input: fc.array(bytesLike(sstpSeeds, 300), { minLength: 1, maxLength: 5 }),
  run(chunks) {
    const r = new SstpReader();
    refuses(() => {
      for (const c of chunks) for (const p of r.push(c)) decodePacket(p);
    }, coded(ErrorCodes.SSTP_PROTOCOL));
  },
};

const pppSeeds = [
  encodeFrame(
    0xc021,
    encodeCp(
      1,
      7,
      encodeOptions([
        { type: 1, value: Buffer.of(5, 0xdc) },
        { type: 3, value: Buffer.of(0xc2, 0x23, 0x81) },
      ]),
    ),
  ),
  encodeFrame(0x8021, encodeCp(2, 1, encodeOptions([{ type: 3, value: Buffer.of(10, 0, 0, 2) }]))),
  encodeFrame(0x0021, randomBytes(60)),
];

const pppFrames: FuzzTarget<Buffer> = {
  name: 'ppp-frames',
  what: 'PPP frames, LCP/IPCP packets and options from the server (core/sstp ppp-codec)',
  input: bytesLike(pppSeeds, 300),
  run(b) {
    refuses(() => {
      const f = decodeFrame(b);
      const cp = decodeCp(f.payload);
      decodeOptions(cp.data);
    }, coded(ErrorCodes.SSTP_PROTOCOL));
  },
};

// ---------------------------------------------------------------- config, settings, admin API

const configSeed = [
  'listen: 127.0.0.1:1080',
  'egress: vpngate',
  'logLevel: info',
  'selector:',
  '  countries: { allow: [JP, KR] }',
  'groups:',
  '  mode: auto',
  '  urlTest: { url: "http://www.gstatic.com/generate_204", intervalMs: 300000, toleranceMs: 50 }',
  '  balance: { tunnels: 2, strategy: round-robin }',
  'switching: { drainGraceMs: 600000 }',
  'vpngate: { sources: ["https://example.org/list.csv"], keepDays: 7 }',
  'upstream: { url: "socks5://127.0.0.1:9050" }',
  'exitCheck: { url: "https://api.ipify.org" }',
  'tunnel: { threads: true, protocols: [openvpn, sstp] }',
  '',
].join('\n');

const configYaml: FuzzTarget<string> = {
  name: 'config-yaml',
  what: 'gatehop.yaml (YAML, then the config schema and its cross-field rules)',
  input: textLike([configSeed], 2048),
  run(text) {
    refuses(() => buildConfig(parseConfigText(text, 'fuzz.yaml'), {}), coded(ErrorCodes.CONFIG_INVALID));
  },
};

const settingsSeed = JSON.stringify({
  version: 1,
  settings: {
    listen: '127.0.0.1:1080',
    language: 'fa',
    countryAllow: ['JP'],
    urlTest: { url: 'http://x/generate_204', intervalMs: 60000 },
    notifications: { switched: true, lost: false, sysproxyChanged: true },
    listSources: ['https://example.org/a.csv'],
  },
});

const settingsJson: FuzzTarget<string> = {
  name: 'settings-json',
  what: '<data-dir>/settings.json (JSON, then the settings schema); a bad file is set aside',
  input: textLike([settingsSeed], 1024),
  run(text) {
    refuses(
      () => parseSettingsText(text),
      (err) => err instanceof SyntaxError || err instanceof ZodError,
    );
  },
};

type OpName = keyof typeof operations;
const bodied = (Object.keys(operations) as OpName[]).filter((k) =>
  ['POST', 'PUT', 'PATCH', 'DELETE'].includes(operations[k].method),
);
const bodySeeds = [
  '{}',
  '{"nodeId":"public-vpn-123"}',
  '{"auto":true}',
  '{"enabled":false}',
  '{"nodeIds":["a","b"]}',
  settingsSeed.replace(/^\{"version":1,"settings":/, '').slice(0, -1),
  '{"url":"https://example.org/api/iphone/"}',
];

const adminBodies: FuzzTarget<[number, string]> = {
  name: 'admin-bodies',
  what: "the admin API's JSON request bodies, against every operation's input schema (core/api)",
  input: fc.tuple(fc.nat({ max: bodied.length - 1 }), textLike(bodySeeds, 1024)),
  run([i, body]) {
    refuses(
      () => parseJsonBody(body, operations[bodied[i]!].input),
      (err) => err instanceof ApiFailure && err.status === 400,
    );
  },
};

const sniffSeeds = [
  clientHello('www.example.ir'),
  Buffer.from('GET / HTTP/1.1\r\nHost: cdn.example\r\n\r\n'),
  Buffer.from('CONNECT a:443 HTTP/1.1\r\n'),
];

const sniffFirstBytes: FuzzTarget<Buffer> = {
  name: 'sniff-first-bytes',
  what: "a client's first bytes read for their name (TLS SNI, HTTP Host) by the proxy's router (core/proxy)",
  input: bytesLike(sniffSeeds, 600),
  run(bytes) {
    const r = sniffName(bytes);
    if (r && 'name' in r) must(/^[a-z0-9_.-]{1,253}$/.test(r.name), `name ${JSON.stringify(r.name)}`);
  },
};

const httpsOnlyJudge: FuzzTarget<Buffer> = {
  name: 'https-only-judge',
  what: "a client's first bytes judged by privacy.httpsOnly: a TLS ClientHello or refused (core/proxy https-only, #59)",
  input: bytesLike(sniffSeeds, 64),
  run(bytes) {
    const v = judgeFirstBytes(bytes);
    // Only a handshake record of TLS 3.x carrying a ClientHello passes; nothing else ever does.
    if (v === 'tls')
      must(bytes[0] === 0x16 && bytes[1] === 0x03 && bytes[2]! <= 4 && bytes[5] === 0x01, 'passed non-TLS');
    // "Wait for more" only while the bytes can still become a ClientHello; once given, pass or
    // refuse holds for every longer input with the same start (which refusal, page or close, may not).
    if (v === 'undecided') must(bytes.length < 6 && (bytes.length === 0 || bytes[0] === 0x16), 'waits forever');
    else
      must((judgeFirstBytes(Buffer.concat([bytes, Buffer.from('x')])) === 'tls') === (v === 'tls'), 'verdict flipped');
  },
};

const ruleSeeds = [
  'DOMAIN-SUFFIX,ir,DIRECT',
  'IP-CIDR,10.0.0.0/8,DIRECT,no-resolve',
  'DOMAIN-REGEX,^ads?\\d*\\.,REJECT',
  'GEOIP,CN,DIRECT',
  'DST-PORT,80/443,TUNNEL',
  'MATCH,PROXY',
  'AND,((DOMAIN,baidu.com),(NETWORK,TCP),(DST-PORT,10001-65535)),REJECT',
  'OR,((AND,((NETWORK,UDP),(DST-PORT,443))),(NOT,((DOMAIN-SUFFIX,ir)))),DIRECT',
];

const ruleLines: FuzzTarget<string> = {
  name: 'rule-lines',
  what: 'rule lines a user pastes (config rules, the window) and classical rule sets (core/rules)',
  input: textLike(ruleSeeds, 300),
  run(text) {
    const { rules, errors } = parseRuleLines(text.split('\n'), 'fuzz');
    for (const e of errors) must(e.message.length > 0 && e.line >= 1, `error ${JSON.stringify(e)}`);
    const table = new RuleTable({ mode: 'rule', rules: rules.map((r) => r.text) });
    table.decide({ network: 'tcp', host: 'www.example.ir', port: 443 });
    table.decide({ network: 'udp', host: '10.1.2.3', port: 53 });
  },
};

const ruleSetSeed = "payload:\n  - '+.example.ir'\n  - 'cdn.example'\n  - '10.0.0.0/8'\n";

const ruleSets: FuzzTarget<[number, string]> = {
  name: 'rule-sets',
  what: 'rule-provider bodies fetched from a URL (yaml or text; domain, ipcidr, classical) (core/rules)',
  input: fc.tuple(fc.nat({ max: 5 }), textLike([ruleSetSeed], 2048)),
  run([k, text]) {
    const behavior = (['domain', 'ipcidr', 'classical'] as const)[k % 3]!;
    const format = k < 3 ? 'yaml' : 'text';
    refuses(
      () => {
        const set = parseRuleSet(text, behavior, format, () => ({ ruleSets: new Map(), geoip: null }));
        set.match({ network: 'tcp', host: 'a.example.ir', port: 443 }, false);
      },
      (err) => err instanceof RuleParseError,
    );
  },
};

const geositeSeed = Buffer.from(
  writeGeoSite({
    cn: [
      { type: 'domain', value: 'baidu.com' },
      { type: 'full', value: 'www.qq.com', attrs: ['cn'] },
      { type: 'plain', value: 'taobao' },
      { type: 'regexp', value: '^cdn\\d+\\.' },
    ],
  }),
);

const geosite: FuzzTarget<Buffer> = {
  name: 'geosite',
  what: 'geosite.dat from the configured URL or the kept copy (core/rules GeoSite, protobuf-reader)',
  input: bytesLike([geositeSeed], 1024),
  run(b) {
    refuses(
      () => {
        const site = GeoSite.parse(b);
        for (const list of site.lists) {
          site.matches(list, 'www.baidu.com');
          site.matches(`!${list}@cn`, 'cdn1.example');
        }
      },
      (err) => err instanceof RuleParseError,
    );
  },
};

const clashSeed = [
  'mode: rule',
  'proxies: [{ name: hk1, type: ss, server: 192.0.2.1, port: 1 }]',
  'proxy-groups:',
  '  - { name: PROXY, type: select, proxies: [hk1, DIRECT] }',
  '  - { name: Ads, type: select, proxies: [REJECT] }',
  'rule-providers:',
  '  ads: { type: http, behavior: domain, format: mrs, url: "https://example.org/a.mrs", interval: 3600 }',
  'sub-rules:',
  '  udp: [ "DST-PORT,443,Ads", "MATCH,PROXY" ]',
  'rules:',
  '  - AND,((NETWORK,UDP),(DST-PORT,443)),Ads',
  '  - SUB-RULE,(NETWORK,UDP),udp',
  '  - MATCH,PROXY',
].join('\n');

const clashConfig: FuzzTarget<string> = {
  name: 'clash-config',
  what: 'a Clash/mihomo config being imported, pasted or fetched by URL (core/rules clash-import)',
  input: textLike([clashSeed], 2048),
  run(text) {
    refuses(
      () => {
        const imp = readClashConfig(text);
        const mapping = Object.fromEntries(imp.targets.map((t) => [t.name, t.guess]));
        const rules = retarget(imp.rules, mapping);
        must(rules.length === imp.rules.length, 'retarget changed the number of rules');
        new RuleTable({ mode: 'rule', rules, subRules: imp.subRules }).decide({
          network: 'udp',
          host: 'x.example',
          port: 443,
        });
      },
      (err) => err instanceof RuleParseError,
    );
  },
};

const mrsSeeds = [
  execFileSync('zstd', ['-q', '-d', '-c'], { input: writeMrsDomains(['+.example.com', '.below.org', 'test.*.x']) }),
  execFileSync('zstd', ['-q', '-d', '-c'], { input: writeMrsRanges([['10.0.0.0', '10.0.0.255']]) }),
  // Bombs at the small limits below: 8 paths of 64 labels spell 16,640 bytes of names, and a set of 80 names.
  mrsChainBombPayload(8, 64),
  mrsChainBombPayload(80, 1),
];
/** Small limits, so that a bomb fits in an input; the checks are the same code as at the real ones. */
const MRS_FUZZ_LIMITS = { entries: 64, nameBytes: 2_048 };

const mrs: FuzzTarget<[number, Buffer]> = {
  name: 'mrs',
  what: "mihomo's binary rule sets after zstd (header, LOUDS domain trie, address ranges, bombs) (core/rules mrs)",
  input: fc.tuple(fc.nat({ max: 1 }), bytesLike(mrsSeeds, 512)),
  run([k, raw]) {
    refuses(
      () => {
        const read = readMrsPayload(raw, k === 0 ? 'domain' : 'ipcidr', MRS_FUZZ_LIMITS);
        const n = 'domains' in read ? read.domains.length : read.ranges.length;
        must(n <= MRS_FUZZ_LIMITS.entries, `${n} entries`);
        if ('domains' in read) {
          for (const d of read.domains) must(d.length <= 512, `a key of ${d.length}`);
          const bytes = read.domains.reduce((a, d) => a + d.length, 0);
          must(bytes <= MRS_FUZZ_LIMITS.nameBytes, `${bytes} bytes of names`);
        }
      },
      (err) => err instanceof RuleParseError,
    );
  },
};

// ---------------------------------------------------------------- SE-VPN (core/softether)

const packSeeds = [
  new Pack()
    .addStr('hello', 'SoftEther VPN Server')
    .addInt('version', 443)
    .addInt('build', 9798)
    .addData('random', Buffer.alloc(20, 9))
    .encode(),
  new Pack()
    .addStr('session_name', 'SID-VPN-1')
    .addData('session_key', Buffer.alloc(20, 1))
    .addInt('max_connection', 8)
    .addInt('timeout', 30_000)
    .addInt64('ticks', 5n)
    .addUniStr('Msg', 'سلام')
    .encode(),
  new Pack().addInt('error', 9).encode(),
];

const softetherPack: FuzzTarget<Buffer> = {
  name: 'softether-pack',
  what: "a node's Hello, Welcome and error PACKs (core/softether Pack.decode)",
  input: bytesLike(packSeeds, 2048),
  run(b) {
    refuses(() => {
      const p = Pack.decode(b);
      must(p.size <= 1024, `${p.size} elements`);
      // What decodes re-encodes to something that decodes to the same names.
      must(
        JSON.stringify(Pack.decode(p.encode()).names()) === JSON.stringify(p.names()),
        'a round trip changed the element names',
      );
    }, coded(ErrorCodes.SOFTETHER_PROTOCOL));
  },
};

const httpHeadSeeds = [
  'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 120\r\nConnection: Keep-Alive\r\n\r\n',
  'HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n',
];

const softetherHttpHead: FuzzTarget<string> = {
  name: 'softether-http-head',
  what: "the HTTP head of a node's answer to the signature and login POSTs (core/softether parseResponseHead)",
  input: textLike(httpHeadSeeds, 10_000),
  run(text) {
    refuses(() => {
      const h = parseResponseHead(Buffer.from(text, 'latin1'));
      if (h) must(h.length <= 8192 && h.contentLength <= 65536, 'a head or body past its bound');
    }, coded(ErrorCodes.SOFTETHER_PROTOCOL));
  },
};

const blockSeeds = [
  encodeBlocks([Buffer.alloc(60, 1), Buffer.alloc(98, 2)]),
  Buffer.concat([encodeKeepAlive(20), encodeBlocks([Buffer.alloc(42, 3)])]),
];

const softetherBlocks: FuzzTarget<Buffer[]> = {
  name: 'softether-blocks',
  what: 'the data stream of an established SE-VPN connection, in any chunking (core/softether BlockReader)',
  input: fc.array(bytesLike(blockSeeds, 400), { minLength: 1, maxLength: 6 }),
  run(chunks) {
    const r = new BlockReader();
    refuses(() => {
      for (const c of chunks)
        for (const f of r.push(c)) must(f.length >= 1 && f.length <= MAX_FRAME, `a frame of ${f.length} bytes`);
    }, coded(ErrorCodes.SOFTETHER_PROTOCOL));
  },
};

const dohAnswerSeeds = [
  Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/dns-message\r\nContent-Length: 12\r\n\r\n0123456789ab'),
  Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n'),
  Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n'),
];

const dohAnswer: FuzzTarget<Buffer> = {
  name: 'doh-answer',
  what: "a DNS-over-HTTPS resolver's HTTP/1.1 answer, across a node (core/netstack parseDohAnswer; privacy.encryptedDns)",
  input: bytesLike(dohAnswerSeeds, 2_000),
  run(buf) {
    refuses(
      () => {
        const a = parseDohAnswer(buf);
        if (a) must(a.body.length <= buf.length, 'a body longer than what came');
      },
      (err) =>
        isGatehopError(err) && (err.code === ErrorCodes.SESSION_PROTOCOL || err.code === ErrorCodes.BUFFER_OVERFLOW),
    );
  },
};

const checkPageSeeds = [
  Buffer.from('HTTP/1.1 204 No Content\r\n\r\n'),
  Buffer.from('HTTP/1.0 200 OK\r\nContent-Length: 22\r\n\r\nMicrosoft Connect Test'),
  Buffer.from('HTTP/1.1 200 OK\r\n\r\nsuccess\n<script src="x"></script>'),
];

const honestyPage: FuzzTarget<Buffer> = {
  name: 'honesty-page',
  what: 'a plain-HTTP answer that came through a node to an honesty check (core/honesty parseCheckResponse)',
  input: bytesLike(checkPageSeeds, 2_000),
  run(buf) {
    refuses(() => {
      const r = parseCheckResponse(buf);
      must(r.status >= 100 && r.status <= 599 && r.body.length <= buf.length, 'a status or body out of bounds');
    }, coded(ErrorCodes.SESSION_PROTOCOL));
  },
};

const echoSeeds = [
  '{"status":"success","country":"Japan","countryCode":"JP","query":"203.0.113.7"}',
  '{"dns":{"geo":"Japan - Example","ip":"198.51.100.53"},"edns":{"geo":"Japan","ip":"203.0.113.0"}}',
  '{"ip":"2001:db8::7","country_code":"de"}',
  '{"origin":"203.0.113.7, 10.0.0.1"}',
  '203.0.113.7\n',
  'Your resolver: 2001:db8:53::1 (cached)',
  'null',
  '[1,2,3]',
];

const addressEcho: FuzzTarget<string> = {
  name: 'address-echo',
  what: "an address or resolver echo service's answer through a node, for the exit check and the leak test (core/app parseExit, parseResolver)",
  input: textLike(echoSeeds, 4096),
  run(body) {
    // Nothing to refuse: any answer is read as an address, a country or nothing, never a throw.
    const exit = parseExit(body);
    must(exit.address === null || isIP(exit.address) !== 0, `not an address: ${exit.address}`);
    must(exit.country === null || /^[A-Z]{2}$/.test(exit.country), `not a country code: ${exit.country}`);
    const resolver = parseResolver(body);
    must(resolver === null || isIP(resolver) !== 0, `not an address: ${resolver}`);
  },
};

const framingSeeds = [
  ...checkPageSeeds,
  Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\n\r\n'),
];

const httpFraming: FuzzTarget<[Buffer, number]> = {
  name: 'http-framing',
  what: 'a plain-HTTP answer through a node, split as the node likes (core/common HttpFraming)',
  input: fc.tuple(bytesLike(framingSeeds, 2_000), fc.integer({ min: 1, max: 64 })),
  run([buf, size]) {
    const whole = new HttpFraming().push(buf);
    const f = new HttpFraming();
    let fed = 0;
    let done = false;
    for (let o = 0; o < buf.length && !done; o += size) {
      const piece = buf.subarray(o, o + size);
      done = f.push(piece);
      fed += piece.length;
    }
    must(f.bytes.equals(buf.subarray(0, fed)), 'the bytes kept differ from the bytes fed');
    must(done === whole, `whole at once: ${whole}; in pieces of ${size}: ${done}`);
  },
};

// ---------------------------------------------------------------- captured programs (#46)

/** A DNS query for `name` of `type`, as a resolver sends it. */
function dnsQuery(name: string, type: number): Buffer {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.of(l.length), Buffer.from(l)]));
  return Buffer.concat([Buffer.of(0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0), ...labels, Buffer.of(0, 0, type, 0, 1)]);
}

const dnsSeeds = [dnsQuery('files.test', 1), dnsQuery('files.test', 28), dnsQuery('4.0.18.198.in-addr.arpa', 12)];

const captureDns: FuzzTarget<Buffer> = {
  name: 'capture-dns',
  what: "a captured program's DNS query to the gateway (core/capture answerQuery): answered within its bounds or not at all",
  input: bytesLike(dnsSeeds, 600),
  run(buf) {
    const fake = new FakeIps();
    const a = answerQuery(buf, fake);
    if (!a) return;
    must(a.length >= 12 && a.readUInt16BE(0) === buf.readUInt16BE(0), 'an answer that is not to this query');
    must((a[2]! & 0x80) !== 0, 'an answer without QR');
    must(a.length <= 12 + buf.length + 16 + 300, 'an answer out of proportion to its query');
    must(fake.size <= 1, 'one query took more than one address');
  },
};

/** A real gateway over a fake proxy (nothing dialled); what it writes back is collected. */
const nullInbound: CaptureInbound = {
  adoptCaptured: (stream) => void stream.destroy(),
  captureUdp: () => ({ open: () => Promise.resolve(), send: () => {}, close: () => {} }),
};

const tcpSyn = (() => {
  const b = Buffer.alloc(40);
  writeIpv4Header(b, 40, 6, '172.23.255.1', '203.0.113.7');
  b.writeUInt16BE(40000, 20);
  b.writeUInt16BE(443, 22);
  b.writeUInt32BE(1, 24);
  b[32] = 5 << 4;
  b[33] = 0x02;
  return b;
})();
const echo = (() => {
  const b = Buffer.alloc(28);
  writeIpv4Header(b, 28, 1, '172.23.255.1', '172.23.255.2');
  b[20] = 8;
  return b;
})();
const v6 = (() => {
  const b = Buffer.alloc(60);
  b[0] = 0x60;
  b.writeUInt16BE(20, 4);
  b[6] = 6;
  b[7] = 64;
  b[23] = 1;
  b[39] = 2;
  return b;
})();
const packetSeeds = [
  buildUdp('172.23.255.1', 40000, '172.23.255.2', 53, dnsQuery('files.test', 1)),
  buildUdp('172.23.255.1', 40001, '203.0.113.5', 7, Buffer.from('hello')),
  buildUdp('172.23.255.1', 40002, '172.23.255.2', 9, Buffer.from('x')),
  tcpSyn,
  echo,
  v6,
];

/** One gateway for the whole run (an lwIP instance each input would be the run's whole cost). */
let fuzzGateway: { g: Gateway; out: Buffer[] } | null = null;

const capturePackets: FuzzTarget<Buffer> = {
  name: 'capture-packets',
  what: "a captured program's IP packets (gatehop run's TUN) into a real gateway: IPv4/UDP/ICMP read by the gateway, TCP by its lwIP build",
  input: bytesLike(packetSeeds, 1_600),
  setup() {
    const out: Buffer[] = [];
    const g = new Gateway({
      inbound: nullInbound,
      address: '172.23.255.2',
      mtu: 1500,
      log: silentLogger(),
      output: (p) => out.push(p),
    });
    fuzzGateway = { g, out };
    return Promise.resolve();
  },
  teardown() {
    fuzzGateway?.g.close();
    fuzzGateway = null;
    return Promise.resolve();
  },
  run(buf) {
    const { g, out } = fuzzGateway!;
    out.length = 0;
    g.input(buf);
    for (const p of out) {
      must(p.length >= 20 && p.length <= 1_500, 'a packet out of bounds');
      must(p[0]! >> 4 === 4 || p[0]! >> 4 === 6, 'a packet that is not IP');
    }
  },
};

export const TARGETS: FuzzTarget<any>[] = [
  captureDns,
  capturePackets,
  dohAnswer,
  honestyPage,
  addressEcho,
  httpFraming,
  sniffFirstBytes,
  httpsOnlyJudge,
  ruleLines,
  ruleSets,
  geosite,
  mrs,
  clashConfig,
  socks5Heads,
  httpHeaders,
  proxyWire,
  vpngateCsv,
  mirrorDirectory,
  ovpnProfile,
  ovpnControl,
  ovpnMessages,
  ovpnData,
  ovpnWrap,
  ovpnTcpRecords,
  ovpnReliable,
  sstpPackets,
  pppFrames,
  configYaml,
  settingsJson,
  adminBodies,
  softetherPack,
  softetherHttpHead,
  softetherBlocks,
];

export { mutatedFrom };
