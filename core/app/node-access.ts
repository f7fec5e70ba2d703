import { ErrorCodes, GatehopError, hostPort, isGatehopError, type Logger } from '../common/index.js';
import { isIP } from 'node:net';
import {
  parseCertificate,
  pemBody,
  pemCertificates,
  publicRoots,
  socks5UdpAssociate,
  type NodeTrust,
  type ProfileCertChecks,
  type UpstreamProxy,
} from '../reach/index.js';
import { readFileSync } from 'node:fs';
import {
  isTunnel,
  macForNode,
  type EgressManager,
  type OpenVpnLinkSpec,
  type SeVpnLinkSpec,
  type SstpLinkSpec,
  type TunnelProtocol,
} from '../egress/index.js';
import { parseProfile } from '../ovpn/index.js';
import { probeNode, type Prober, type ProbeResult, type RankGate, type Ranking } from '../selector/index.js';
import type { ProtocolChoice } from '../groups/index.js';
import type { Store } from '../store/index.js';
import { profileCaKey, type VpnGateNode } from '../vpngate/index.js';
import { directDialer, localGoesDirect, upstreamDialer, type Dialer } from '../reach/index.js';
import type { GatehopConfig } from './config.js';
import { NodePathLadder, type NodePath } from './node-path.js';

export type { NodePath } from './node-path.js';

/** VPN Gate nodes' DDNS names: `<HostName>.opengw.net`. */
export const DDNS_SUFFIX = 'opengw.net';

/**
 * How Gatehop reaches the list and the nodes from this network (config `vpngate.connectBy` and
 * `upstream`): by address or by DDNS name, straight or through the user's proxy. Read per use, so a
 * reload applies to the next fetch, probe and tunnel.
 */
export class NodeAccess {
  /** What each SOCKS5 proxy's UDP relay did (by its URL without password), as learnt or remembered. */
  readonly #udpOf = new Map<string, 'unknown' | 'works' | 'fails'>();
  /** Which protocol's way each node's latest probe answered on. */
  readonly #probedBy = new Map<string, TunnelProtocol>();
  /** Whether a `<ca>` (by profileCaKey) holds a private CA: thousands of rows share a few CAs. */
  readonly #privateCaOf = new Map<string, boolean>();
  #ca: { path: string; pem: string } | null = null;
  /** With upstream.nodes: fallback, the way nodes are reached on this network now (node-path.ts). */
  readonly #paths: NodePathLadder;

  /**
   * `ladder` is what this network taught about protocols (the switch controller's ProtocolChoice,
   * made before either and set to this network before the first ranking): the probes ask it, so
   * no probe of a blocked protocol exists, however early it runs (#58).
   */
  constructor(
    private config: () => GatehopConfig,
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly ladder: Pick<ProtocolChoice, 'attemptOrder'>,
  ) {
    this.#paths = new NodePathLadder(() => this.config().upstream?.nodes === 'fallback', store, logger);
  }

  /**
   * The protocols `node` can be reached with: OpenVPN by its profile (not a UDP node through an
   * upstream proxy without UDP), SSTP by its DDNS name (listed nodes; a profile file has none).
   * Only those in the node's own order (tunnel.nodeProtocols), else in tunnel.protocols.
   */
  offered(node: VpnGateNode): TunnelProtocol[] {
    const allowed = this.#ownOrder(node) ?? this.config().tunnel.protocols;
    const up = this.#upstream();
    const out: TunnelProtocol[] = [];
    if (allowed.includes('openvpn') && node.profile && !(up && node.proto === 'udp' && this.#udp(up) === 'fails'))
      out.push('openvpn');
    if (allowed.includes('sstp') && node.source === 'list') out.push('sstp');
    // SE-VPN trusts the node by the CA in its profile (or the OS roots under its DDNS name).
    if (allowed.includes('sevpn') && node.profile) out.push('sevpn');
    return out.sort((a, b) => allowed.indexOf(a) - allowed.indexOf(b));
  }

  /** The user's own order for `node` (tunnel.nodeProtocols), or null. */
  #ownOrder(node: VpnGateNode): readonly TunnelProtocol[] | null {
    const own = this.config().tunnel.nodeProtocols;
    return Object.hasOwn(own, node.id) ? own[node.id]! : null;
  }

  /** The TLS port SSTP uses: the node's own TCP port (SoftEther serves every protocol there), else tunnel.sstp.port. */
  sstpPort(node: VpnGateNode): number {
    return node.proto === 'tcp' ? node.port : this.config().tunnel.sstp.port;
  }

  /**
   * Whom `node`'s certificate may come from, the same on every protocol (core/reach/node-trust):
   * the `<ca>` of its profile, the user's extra CA (`tunnel.nodeCa`), and for a listed node its
   * DDNS name, under which alone a public CA may vouch for it. The user's own profile has no name
   * (OpenVPN's rule, its `<ca>` for the chain), unless its `remote` is a DDNS name; its
   * `remote-cert-tls` and `verify-x509-name` apply on every protocol, as OpenVPN applies them (#59:
   * SE-VPN, offered to these nodes too, ignored them).
   */
  trustOf(node: VpnGateNode): NodeTrust {
    const extra = this.#caPem(this.config().tunnel.nodeCa);
    const checks = this.#profileChecks(node);
    return {
      profileCa: this.#profileCa(node),
      ...(extra ? { extraRoots: [extra] } : {}),
      serverName: node.source === 'list' ? `${node.id}.${DDNS_SUFFIX}` : ownDdnsName(node),
      ...(checks ? { profileChecks: checks } : {}),
      ...(caInClear(node) ? { profileCaInClear: true } : {}),
    };
  }

  /** The node's profile's own certificate checks, where it has any. */
  #profileChecks(node: VpnGateNode): ProfileCertChecks | null {
    try {
      const { remoteCertTls, verifyX509Name } = parseProfile(node.profile);
      return remoteCertTls || verifyX509Name ? { remoteCertTls, verifyX509Name } : null;
    } catch {
      return null;
    }
  }

  /** An SSTP tunnel to `node`: its address (or name), its TLS port, whom its certificate may come from, the account. */
  sstpSpec(node: VpnGateNode): Omit<SstpLinkSpec, 'protocol'> {
    const t = this.config().tunnel.sstp;
    const up = this.#upstream();
    return {
      host: this.hostOf(node),
      port: this.sstpPort(node),
      trust: { ...this.trustOf(node), serverName: `${node.id}.${DDNS_SUFFIX}` },
      sni: t.sni,
      username: t.username,
      password: t.password,
      ...(up ? { upstreamUrl: urlOf(up) } : {}),
    };
  }

  /** The certificates in the `<ca>` of the node's own OpenVPN profile: the CA its certificate chains to, on every protocol. */
  #profileCa(node: VpnGateNode): string[] {
    try {
      const ca = parseProfile(node.profile).ca;
      return ca ? pemCertificates(ca) : [];
    } catch {
      return [];
    }
  }

  /**
   * An SE-VPN tunnel to `node`: its address (or name) and TLS port (as SSTP's), whom its
   * certificate may come from; the hub and account; its MAC on the hub (the node's stable one
   * unless another tunnel to it holds that: HubMacs).
   */
  sevpnSpec(node: VpnGateNode, mac: string = macForNode(node.id).toString('hex')): Omit<SeVpnLinkSpec, 'protocol'> {
    const c = this.config().tunnel;
    const up = this.#upstream();
    return {
      host: this.hostOf(node),
      port: this.sstpPort(node),
      trust: this.trustOf(node),
      sni: c.sstp.sni,
      hub: c.sevpn.hub,
      username: c.sevpn.username,
      password: c.sevpn.password,
      connections: c.sevpn.connections,
      mac,
      ...(up ? { upstreamUrl: urlOf(up) } : {}),
    };
  }

  #caPem(path: string | undefined): string | null {
    if (!path) return null;
    if (this.#ca?.path === path) return this.#ca.pem;
    try {
      const pem = readFileSync(path, 'utf8');
      if (!/-----BEGIN CERTIFICATE-----/.test(pem)) throw new Error('no PEM certificate in it');
      this.#ca = { path, pem };
      return pem;
    } catch (err) {
      throw new GatehopError(ErrorCodes.CONFIG_INVALID, `tunnel.nodeCa: ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** An HTTP proxy has no UDP at all; a SOCKS5 one may have a relay (asked once, then remembered). */
  #udp(up: UpstreamProxy): 'unknown' | 'works' | 'fails' {
    if (up.kind === 'http') return 'fails';
    let v = this.#udpOf.get(up.display);
    if (!v) {
      v = this.#remembered(up);
      this.#udpOf.set(up.display, v);
    }
    return v;
  }

  /** The list's own fetches: through the upstream proxy when one is set. */
  listDialer(c: GatehopConfig = this.config()): Dialer {
    const up = c.upstream;
    // The LAN is local except in the global mode, which sends it through the tunnel too.
    return up ? localGoesDirect(upstreamDialer(up.proxy), () => this.config().mode !== 'global') : directDialer();
  }

  /** The host a node is dialled at: its address, or its DDNS name with connectBy: hostname. */
  hostOf(node: VpnGateNode): string {
    return this.config().vpngate.connectBy === 'hostname' && node.source === 'list'
      ? `${node.id}.${DDNS_SUFFIX}`
      : node.ip;
  }

  /**
   * What a tunnel to `node` needs beyond its profile. A listed node is always dialled at
   * `hostOf(node)`, never at its profile's `remote`: the address dialled is the address probed,
   * shown and remembered. The user's own profile (`--ovpn`) is trusted as it is.
   */
  openVpnSpec(node: VpnGateNode): Pick<OpenVpnLinkSpec, 'remoteHost' | 'upstreamUrl' | 'trust'> {
    const up = this.#upstream();
    const { serverName, extraRoots, profileCaInClear } = this.trustOf(node);
    return {
      ...(node.source === 'list' ? { remoteHost: this.hostOf(node) } : {}),
      ...(up ? { upstreamUrl: urlOf(up) } : {}),
      trust: {
        serverName,
        ...(extraRoots ? { extraRoots: [...extraRoots] } : {}),
        ...(profileCaInClear ? { profileCaInClear } : {}),
      },
    };
  }

  /**
   * Probes take the ways tunnels will take, in the order a tunnel would (the ladder's attemptOrder):
   * the node's OpenVPN port (a UDP reset, or a TCP handshake), and where the node offers SSTP or
   * SE-VPN, a TCP handshake to their TLS port (once for both). A network that drops OpenVPN then
   * still ranks nodes, and the switch tries them over the protocol that gets through. Where this
   * network was found to block a protocol, no probe packet of it is sent at all (a filter that
   * sees OpenVPN handshakes may flag the host), until the network changes, the lesson expires or
   * the user forgets it. A node with the user's own order is probed in that order, OpenVPN
   * included if the user put it there: the user asked for it on that node.
   */
  readonly prober: Prober = async (node, opts) => {
    const order = this.ladder.attemptOrder(node.id, this.offered(node));
    const upstream = this.#upstream();
    let last: ProbeResult = { rttMs: null, samples: [] };
    let tlsPortProbed = false;
    for (const p of order) {
      if (p !== 'openvpn') {
        // SSTP and SE-VPN by a TCP handshake to their TLS port: no protocol packet a filter could read.
        if (tlsPortProbed) continue;
        tlsPortProbed = true;
      }
      last =
        p === 'openvpn'
          ? await probeNode(node.proto, this.hostOf(node), node.port, { ...opts, upstream })
          : await probeNode('tcp', this.hostOf(node), this.sstpPort(node), { ...opts, upstream });
      if (last.rttMs !== null) {
        this.#probedBy.set(node.id, p);
        return last;
      }
    }
    this.#probedBy.delete(node.id);
    return last;
  };

  /**
   * UDP nodes through an HTTP proxy cannot work; through a SOCKS5 proxy only if its UDP relay
   * does. That is tried once (the first ranking probes UDP nodes through the relay) and remembered
   * per proxy; a relay that answered no UDP probe while TCP nodes answered counts as not working.
   */
  readonly reachable: RankGate = (node) => {
    const up = this.#upstream();
    if (!up || node.proto !== 'udp') return null;
    // SSTP runs over TCP: a UDP node stays reachable through any proxy that way.
    return this.#udp(up) === 'fails' && !this.offered(node).includes('sstp') ? 'needs-udp' : null;
  };

  /**
   * A listed node whose certificate only a private CA could vouch for, named by nothing but a list
   * fetched in clear (#59): its tunnel would be refused on every protocol, so it is not ranked.
   * A node whose `<ca>` is a public root (VPN Gate's nodes today) is judged under its DDNS name
   * and passes, wherever its row came from.
   */
  readonly untrusted: RankGate = (node) => (caInClear(node) && this.#privateCa(node) ? 'ca-in-clear' : null);

  /**
   * Whether the node's `<ca>` holds a CA that neither a public root nor the user's tunnel.nodeCa
   * vouches for (by its text, cached).
   */
  #privateCa(node: VpnGateNode): boolean {
    const nodeCa = this.config().tunnel.nodeCa ?? '';
    const key = `${nodeCa}\0${profileCaKey(node.profile)}`;
    let v = this.#privateCaOf.get(key);
    if (v === undefined) {
      const roots = publicRoots();
      const own = new Set(pemCertificates(this.#nodeCaText(nodeCa)).map(pemBody));
      // A `<ca>` that does not parse vouches for nothing either way: the tunnel says so itself.
      v = this.#profileCa(node).some(
        (pem) => parseCertificate(pem) !== null && !roots.vouchesFor(pem) && !own.has(pemBody(pem)),
      );
      if (this.#privateCaOf.size > 4096) this.#privateCaOf.clear();
      this.#privateCaOf.set(key, v);
    }
    return v;
  }

  /** tunnel.nodeCa's text, or '' (none, or a file that cannot be read: a tunnel says why). */
  #nodeCaText(path: string): string {
    try {
      return this.#caPem(path || undefined) ?? '';
    } catch {
      return '';
    }
  }

  /**
   * Before the first ranking: a SOCKS5 upstream that refuses UDP ASSOCIATE (many do: microsocks,
   * most SSH tunnels) is known at once, so UDP nodes are skipped rather than probed and backed off.
   * An accepted association still has to carry a node's answer (observe) before it counts as working.
   */
  async prepare(): Promise<void> {
    const up = this.#upstream();
    if (!up || this.#udp(up) !== 'unknown') return;
    try {
      const { control } = await socks5UdpAssociate(up, { timeoutMs: 5_000 });
      control.destroy();
    } catch (err) {
      if (
        isGatehopError(err, ErrorCodes.UPSTREAM_FAILED) &&
        /command not supported|general failure|not allowed/.test((err as Error).message)
      )
        this.#learn(up, 'fails');
      else
        this.logger.info(
          { event: 'upstream-udp-unknown', proxy: up.display, err: (err as Error).message },
          `could not ask ${up.display} for a UDP relay yet: ${(err as Error).message}`,
        );
    }
  }

  /**
   * The machine is on another network (or back on one it knew): with upstream.nodes: fallback,
   * nodes are reached the way that worked here last, else directly first.
   */
  setNetwork(key: string): void {
    this.#paths.setNetwork(key);
  }

  /** Told of the way nodes are reached whenever it changes (and at once): what is learnt is kept with it. */
  usePathListener(fn: (path: NodePath) => void): void {
    this.#paths.listen(fn);
  }

  /** Forgets the way that reached nodes on this network (Settings → This network): direct first again. */
  forgetPath(): void {
    this.#paths.forget();
  }

  /** With upstream.nodes: fallback, how nodes are reached on this network now (else null). */
  get path(): NodePath | null {
    return this.config().upstream?.nodes === 'fallback' ? this.#paths.path : null;
  }

  /** Learns from a ranking of `pool` which path reaches nodes, and whether the upstream's UDP relay carries OpenVPN. */
  observe(r: Ranking, pool: readonly VpnGateNode[]): void {
    this.#paths.climb(r, pool);
    const up = this.#upstream();
    if (!up || this.#udp(up) !== 'unknown') return;
    const udp = new Set(pool.filter((n) => n.proto === 'udp').map((n) => n.id));
    // Only probes that went the OpenVPN way say anything about the relay (an SSTP answer is TCP).
    if (r.ranked.some((x) => udp.has(x.node.id) && this.#probedBy.get(x.node.id) === 'openvpn'))
      return this.#learn(up, 'works');
    const udpFailed = r.excluded.some((x) => x.reason === 'unreachable' && udp.has(x.nodeId));
    // Only when TCP nodes answered through the same proxy: otherwise the proxy itself is down.
    if (udpFailed && r.ranked.some((x) => !udp.has(x.node.id))) this.#learn(up, 'fails');
  }

  get upstreamUdp(): 'unknown' | 'works' | 'fails' | null {
    const up = this.#upstream();
    return up ? this.#udp(up) : null;
  }

  #learn(up: UpstreamProxy, verdict: 'works' | 'fails'): void {
    this.#udpOf.set(up.display, verdict);
    try {
      this.store.setSetting(`upstream-udp ${up.display}`, verdict);
    } catch {
      /* remembered for this run only */
    }
    this.logger.info(
      { event: 'upstream-udp', proxy: up.display, works: verdict === 'works' },
      verdict === 'works'
        ? `the upstream proxy ${up.display} relays UDP: UDP nodes go through it`
        : `the upstream proxy ${up.display} does not relay UDP for OpenVPN: UDP nodes are skipped`,
    );
  }

  #remembered(up: UpstreamProxy): 'unknown' | 'works' | 'fails' {
    const v = this.store.setting(`upstream-udp ${up.display}`);
    return v === 'works' || v === 'fails' ? v : 'unknown';
  }

  /** The proxy nodes are reached through (upstream.nodes, and on `fallback` the path this network needs), or null. */
  #upstream(): UpstreamProxy | null {
    const up = this.config().upstream;
    if (!up || up.nodes === false) return null;
    return up.nodes === true || this.#paths.path === 'upstream' ? up.proxy : null;
  }
}

/** A PEM certificate's base64 body, white space removed: equal for the same certificate however it is wrapped. */
/** A listed node whose `<ca>` only a list fetched in clear vouches for (VpnGateNode.caVouchedBy). */
function caInClear(node: VpnGateNode): boolean {
  return node.source === 'list' && !node.caVouchedBy;
}

/**
 * The user's own profile names a VPN Gate node by its DDNS name (`remote vpn123.opengw.net …`):
 * that name is checked as a listed node's is, so a public `<ca>` vouches for that node alone.
 */
function ownDdnsName(node: VpnGateNode): string | null {
  const host = node.ip.toLowerCase().replace(/\.$/, '');
  return isIP(host) === 0 && host.endsWith(`.${DDNS_SUFFIX}`) ? host : null;
}

function urlOf(up: UpstreamProxy): string {
  const who =
    up.username !== null
      ? `${encodeURIComponent(up.username)}${up.password !== null ? `:${encodeURIComponent(up.password)}` : ''}@`
      : '';
  return `${up.kind}://${who}${hostPort(up.host, up.port)}`;
}

/**
 * The list's way through a working tunnel: a connection through the active tunnel, leased like a
 * proxy session so a switch lets it finish (make-before-break), names resolved inside the tunnel.
 */
export function tunnelDialerOf(manager: EgressManager, lanIsLocal: () => boolean = () => true): Dialer | null {
  if (!isTunnel(manager.active)) return null;
  return localGoesDirect(
    {
      via: 'tunnel',
      dial: async (host, port, signal) => {
        const lease = manager.acquire();
        if (!isTunnel(lease.egress)) {
          lease.release();
          throw new GatehopError(ErrorCodes.EGRESS_CLOSED, 'no tunnel is up');
        }
        try {
          const c = await lease.egress.connectTcp(host, port, { signal, timeoutMs: 15_000 });
          c.stream.once('close', () => lease.release());
          return c.stream;
        } catch (err) {
          lease.release();
          throw err;
        }
      },
    },
    lanIsLocal,
  );
}
