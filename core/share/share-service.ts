import QRCode from 'qrcode';
import { hostPort, type Endpoint, type Logger } from '../common/index.js';
import type { ProxyOptions, ProxyServer, UserUsage } from '../proxy/index.js';
import { DeviceBook, type DeviceKeeper, type ShareDevice } from './device-book.js';
import { firewallState, openingCommands, runToEnd, type FirewallState, type RunCommand } from './firewall.js';
import { lanAddresses, type LanAddress } from './lan-addresses.js';
import { pageUrl, phonePages } from './phone-page.js';

/** What the shared listener copies from the main proxy: its limits and timeouts. */
export type ShareLimits = Omit<ProxyOptions, 'host' | 'port' | 'credentials' | 'pages' | 'allowFrom'>;

export interface ShareServiceOptions {
  /** The port phones connect to on this computer's LAN addresses (config share.port). */
  port: number;
  /** Where devices are kept (the store), or null (memory only). */
  keeper: DeviceKeeper | null;
  /** A proxy server on the core's egress and routing, for these options (the app makes it). */
  makeServer: (options: ProxyOptions) => ProxyServer;
  /** The main proxy's limits now (a reload may change them). */
  limits: () => ShareLimits;
  /** Said when the switch changes (the app keeps it for the next start). */
  onEnabledChange?: (enabled: boolean) => void;
  logger: Logger;
  /** This computer's LAN addresses (tests give their namespace's). */
  addresses?: () => LanAddress[];
  /** How the firewall is read (tests give their commands' answers). */
  runCommand?: RunCommand;
}

/** The firewall's answer is read again after this long (each read runs a command or three). */
const FIREWALL_TTL_MS = 3_000;

export interface SharedDeviceView extends UserUsage {
  id: string;
  name: string;
  createdAt: number;
  enrolledAddress: string | null;
  enrolledUntil: number | null;
  /** Its page on the first LAN address (what its QR code holds); null while nothing listens. */
  pageUrl: string | null;
  /** For apps that take a URL: socks5://user:password@address:port; null while nothing listens. */
  proxyUrl: string | null;
}

export interface ShareView {
  enabled: boolean;
  port: number;
  /** Listening now (false while off, or when the port could not be bound: see error). */
  listening: boolean;
  error: string | null;
  addresses: Array<{ address: string; interface: string; cidr: string }>;
  devices: SharedDeviceView[];
  /**
   * What the firewall does with the port, as last read (null: not read yet, or not listening), and
   * the commands that let it in where it blocks it ("Allow in the firewall" runs them).
   */
  firewall: (Omit<FirewallState, 'chain'> & { opening: string[] | null }) | null;
}

/**
 * "Share with this network" (#63): a second listener, on this computer's LAN addresses only, for
 * the devices the user adds. It is its own ProxyServer on the core's egress and routing: loopback
 * peers are refused on it (the loopback listener keeps its own behaviour), peers outside this
 * computer's networks are refused before a byte is read (allowFrom `lan`), each device is its own
 * proxy user (a generated password, or the address it enrolled from), and revoking a device ends
 * its sessions. Off by default; the switch is kept by the app.
 */
export class ShareService {
  readonly devices: DeviceBook;
  #server: ProxyServer | null = null;
  #bound: Endpoint | null = null;
  #enabled = false;
  #error: string | null = null;
  /** One switch at a time: a click while the port binds waits for it. */
  #chain: Promise<unknown> = Promise.resolve();
  readonly #log: Logger;
  readonly #addresses: () => LanAddress[];
  readonly #offRevoked: () => void;
  #firewall: { state: FirewallState; at: number } | null = null;

  constructor(private readonly opts: ShareServiceOptions) {
    this.#log = opts.logger.child({ component: 'share' });
    this.#addresses = opts.addresses ?? (() => lanAddresses());
    this.devices = new DeviceBook(opts.keeper);
    this.#offRevoked = this.devices.onRevoked((d) => {
      const cut = this.#server?.closeSessionsOf(d.id, 'device-revoked') ?? 0;
      this.#server?.forgetUsage(d.id);
      this.#log.info({ event: 'device-revoked', device: d.id, sessionsClosed: cut }, `stopped sharing with ${d.name}`);
    });
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  /** The shared listener's server while it listens (stats and sessions), else null. */
  get server(): ProxyServer | null {
    return this.#server;
  }

  /** Turns sharing on (binds the port on every address, loopback refused by the filter) or off (ends every shared session). */
  setEnabled(on: boolean): Promise<ShareView> {
    const next = this.#chain.then(() => this.#apply(on));
    this.#chain = next.catch(() => undefined);
    return next;
  }

  async #apply(on: boolean): Promise<ShareView> {
    if (on === this.#enabled && (on ? this.#server !== null : true)) return this.view();
    if (!on) {
      this.#enabled = false;
      this.#error = null;
      const s = this.#server;
      this.#server = null;
      this.#bound = null;
      await s?.close();
      this.#log.info({ event: 'share-off' }, 'stopped sharing with this network');
      this.opts.onEnabledChange?.(false);
      return this.view();
    }
    this.#enabled = true;
    this.opts.onEnabledChange?.(true);
    const server = this.opts.makeServer({
      ...this.opts.limits(),
      host: '::',
      port: this.opts.port,
      allowFrom: ['lan'],
      credentials: { verify: (u, p) => this.devices.verify(u, p), admitted: (a) => this.devices.admitted(a) },
      pages: phonePages(this.devices),
    });
    try {
      this.#bound = await listenAnyFamily(server, this.opts.port);
      this.#server = server;
      this.#error = null;
      this.#log.info(
        { event: 'share-on', port: this.#bound.port },
        `sharing with this network on port ${this.#bound.port}`,
      );
    } catch (err) {
      await server.close();
      this.#error = (err as Error).message;
      this.#log.warn({ event: 'share-failed', err: this.#error }, 'cannot share with this network');
    }
    return this.view();
  }

  /** The listener's port now (the configured one once bound), or null. */
  get port(): number | null {
    return this.#bound?.port ?? null;
  }

  /** What the status line and the tray show: cheap (no interface walk), read every second. */
  summary(): { enabled: boolean; listening: boolean; port: number; devices: number } {
    return {
      enabled: this.#enabled,
      listening: this.#server !== null,
      port: this.#bound?.port ?? this.opts.port,
      devices: this.devices.list().length,
    };
  }

  view(): ShareView {
    const addresses = this.#addresses();
    const first = addresses[0];
    const at = first && this.#bound ? hostPort(first.address, this.#bound.port) : null;
    return {
      enabled: this.#enabled,
      port: this.#bound?.port ?? this.opts.port,
      listening: this.#server !== null,
      error: this.#error,
      addresses: addresses.map((a) => ({ address: a.address, interface: a.interface, cidr: a.cidr })),
      devices: this.devices.list().map((d) => this.#deviceView(d, at)),
      firewall: this.#server && this.#firewall ? this.#firewallView(this.#firewall.state, addresses[0]) : null,
    };
  }

  /**
   * Lets the port in from this computer's first LAN network where the firewall blocks it ("Allow in
   * the firewall"): the firewall's own command, run directly when Gatehop is root, else through
   * pkexec (the desktop asks for the administrator's password). Resolves with the view read again;
   * throws with the command to run by hand when it cannot.
   */
  async openFirewall(run: (argv: string[]) => Promise<void> = runToEnd): Promise<ShareView> {
    const view = await this.freshView();
    const lan = view.addresses[0];
    // The reading itself (the view's copy leaves out the chain an nftables rule goes in).
    const fw = this.#firewall?.state ?? null;
    const commands = fw && lan ? openingCommands(fw, view.port, lan.cidr) : null;
    if (!commands) return view;
    const asRoot = process.getuid?.() === 0;
    for (const argv of commands) await run(asRoot ? argv : ['pkexec', ...argv]);
    this.#log.info(
      { event: 'firewall-opened', port: view.port, commands: commands.map((c) => c.join(' ')) },
      `let port ${view.port} in`,
    );
    this.#firewall = null;
    return this.freshView();
  }

  #firewallView(fw: FirewallState, lan: LanAddress | undefined): ShareView['firewall'] {
    const commands = lan ? openingCommands(fw, this.#bound?.port ?? this.opts.port, lan.cidr) : null;
    return { tool: fw.tool, state: fw.state, detail: fw.detail, opening: commands?.map((c) => c.join(' ')) ?? null };
  }

  /** The view with the firewall read again if its last reading is older than a few seconds. */
  async freshView(): Promise<ShareView> {
    if (this.#server && (!this.#firewall || Date.now() - this.#firewall.at > FIREWALL_TTL_MS)) {
      const state = await firewallState(this.#bound?.port ?? this.opts.port, this.opts.runCommand);
      this.#firewall = { state, at: Date.now() };
    }
    return this.view();
  }

  #deviceView(d: ShareDevice, at: string | null): SharedDeviceView {
    const usage = this.#server?.usageOf(d.id) ?? { sessionsActive: 0, sessionsTotal: 0, bytesUp: 0, bytesDown: 0 };
    return {
      id: d.id,
      name: d.name,
      createdAt: d.createdAt,
      enrolledAddress: d.enrolledAddress,
      enrolledUntil: d.enrolledUntil,
      ...usage,
      pageUrl: at ? pageUrl(d, at) : null,
      proxyUrl: at ? `socks5://${d.id}:${d.secret}@${at}` : null,
    };
  }

  add(name: string): SharedDeviceView {
    const d = this.devices.add(name);
    this.#log.info({ event: 'device-added', device: d.id }, `sharing with ${d.name}`);
    return this.view().devices.find((v) => v.id === d.id)!;
  }

  /** A device's page address and its QR code (a PNG data URL), drawn by the qrcode library. */
  async qr(id: string): Promise<{ url: string; png: string } | null> {
    const v = this.view().devices.find((d) => d.id === id);
    if (!v?.pageUrl) return null;
    const png = await QRCode.toDataURL(v.pageUrl, { errorCorrectionLevel: 'M', margin: 2, scale: 8 });
    return { url: v.pageUrl, png };
  }

  async close(): Promise<void> {
    this.#offRevoked();
    await this.#chain;
    const s = this.#server;
    this.#server = null;
    await s?.close();
  }
}

/** Both families on one socket where IPv6 exists (`::` takes IPv4 too), else IPv4 alone. */
async function listenAnyFamily(server: ProxyServer, port: number): Promise<Endpoint> {
  try {
    return await server.listen();
  } catch (err) {
    const cause = (err as { cause?: NodeJS.ErrnoException }).cause;
    if (cause?.code !== 'EAFNOSUPPORT' && cause?.code !== 'EADDRNOTAVAIL') throw err;
    return server.listenOn('0.0.0.0', port);
  }
}
