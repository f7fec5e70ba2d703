import type { HeapTrimmer, LogTap, TransferCollector } from '../common/index.js';
import type { LoopDelay } from './loop-delay.js';
import type { CaptureTicketDto, ReloadResult, Settings, SysproxyState } from './contract.js';
import type { ExitInfoDto, LeakReport, RuleImportResult, ruleImportRequestSchema } from './schemas.js';
import type { z } from 'zod';
import type { EgressManager } from '../egress/index.js';
import type { DelaySweep, PoolRecovery, SwitchController } from '../groups/index.js';
import type { Selector } from '../selector/index.js';
import type { ProxyServer } from '../proxy/index.js';
import type { Store } from '../store/index.js';
import type { NodeList } from '../vpngate/index.js';
import type { RouteMode, RuleTable } from '../rules/index.js';
import type { HonestyRecord, Tampering } from '../honesty/index.js';
import type { ShareService } from '../share/index.js';
import type { TrafficBook } from '../traffic/index.js';
import type { NetworkProfiles } from '../profiles/index.js';

/** What the admin API reads and steers; the app assembles it (the API never imports core/app). */
export interface AdminCore {
  readonly version: string;
  readonly startedAt: number;
  readonly egressKind: 'direct' | 'vpngate';
  readonly proxyAddress: string;
  readonly proxy: ProxyServer;
  readonly manager: EgressManager | null;
  readonly controller: SwitchController | null;
  readonly nodes: NodeList | null;
  readonly selector: Selector | null;
  readonly store: Store | null;
  readonly logTap: LogTap | null;
  /** Retrying a start without network (vpngate egress); absent in older embedders = null. */
  readonly recovery?: PoolRecovery | null;
  /** The window's settings (GET/PUT /settings); null: not offered by this embedder. */
  readonly settings?: SettingsAccess | null;
  /** The OS proxy (GET/PUT /sysproxy); null: not offered. */
  readonly systemProxy?: SystemProxyControl | null;
  /** `gatehop run` (Linux): tickets to the capture socket, and the programs captured now; null: not offered. */
  readonly capture?: {
    /** Whether `gatehop run` works with this core, and why not. */
    available(): { available: boolean; reason: 'platform' | 'helper' | 'socket' | null };
    ticket(command: string): CaptureTicketDto;
    /** "Run a program through Gatehop…": a command line or a .desktop file, in a terminal or not. */
    launch(line: string, terminal: boolean): { pid: number; command: string[] };
    sessions(): Array<{ id: number; command: string; startedAt: number; connections: number; udpFlows: number }>;
  } | null;
  /** The built renderer served at /ui/; null: no dashboard. */
  readonly uiDir?: string | null;
  /** The main event loop's delay, for /status and metrics; absent: metrics keep their own. */
  readonly loopDelay?: LoopDelay | null;
  /** Gives glibc's free native memory back (absent or inactive: the native module did not load). */
  readonly heapTrimmer?: HeapTrimmer | null;
  /** The main thread's scavenges for the data tunnel threads hand it (absent: no tunnel threads). */
  readonly transfers?: Pick<TransferCollector, 'stats'> | null;
  /** How nodes are reached (connectBy, the upstream proxy and whether its UDP relay works). */
  readonly reach?:
    | (() => {
        connectBy: 'ip' | 'hostname';
        upstream: string | null;
        upstreamUdp: 'unknown' | 'works' | 'fails' | null;
        /** With upstream.nodes: fallback, the path this network needs now; else null. */
        nodePath?: 'direct' | 'upstream' | null;
      })
    | null;
  /** The core's log level (pino's names), changeable live (the Clash API's log-level). */
  readonly logLevel?: { get(): string; set(level: string): void } | null;
  /** "Test all": URL tests through every node, a few at a time. */
  readonly delaySweep?: DelaySweep | null;
  /** Where a user-supplied Clash dashboard build lives (served at /ui/external/); null: none. */
  readonly externalUiDir?: string | null;
  /** Where dashboards keep their own settings (mihomo's /storage/:key); null: not offered. */
  readonly dashboardStorageDir?: string | null;
  /** Where am I: the exit address through the active tunnel (config exitCheck.url); null: off. */
  readonly exit?: ExitCheckAccess | null;
  /** The desktop app around the core (start at login, restart); null: the CLI. */
  readonly desktop?: DesktopAccess | null;
  /** POST /reload: re-reads the config and applies what can change live; null: not offered. */
  readonly reload?: (() => Promise<ReloadResult>) | null;
  /** The rule table, its mode and rule sets (the Clash API's /rules, /providers/rules, mode). */
  readonly routing?: RoutingAccess | null;
  /** The honesty checks of nodes (vpngate egress); null: none run in this core. */
  readonly honesty?: HonestyAccess | null;
  /** Forgets the way nodes were reached on this network (the path ladder), with its protocol lesson. */
  readonly forgetNodePath?: () => void;
  /** "Share with this network" (#63); null: not offered by this embedder. */
  readonly share?: ShareService | null;
  /** Where the bytes went (#64); absent in embeddings without it. */
  readonly traffic?: TrafficBook | null;
  /** The core's part of the leak self-test (#64); absent or null where no node is ever used. */
  readonly leakTest?: (() => Promise<LeakReport>) | null;
  /** The profiles per network (#64); absent or null where settings cannot be changed. */
  readonly profiles?: NetworkProfiles | null;
  /** The privacy opt-ins in force (config privacy; encryptedDns as the active tunnel does it, see the status schema). */
  readonly privacy?: () => { encryptedDns: boolean; encryptedDnsNext: boolean; httpsOnly: boolean };
}

/** What the API reads and asks of the honesty checks (core/honesty's HonestyMonitor, with the app's way to a tunnel). */
export interface HonestyAccess {
  readonly enabled: boolean;
  readonly records: ReadonlyMap<string, HonestyRecord>;
  get(nodeId: string): HonestyRecord | null;
  /** Found to tamper and not accepted by the user. */
  blocked(nodeId: string): Tampering | null;
  /** The user saw the verdict and picks the node anyway. */
  accept(nodeId: string): void;
  checking(nodeId: string): boolean;
  /** A check now: through the node's tunnel in use, or one opened for it. */
  checkNow(nodeId: string): Promise<HonestyRecord | null>;
  onVerdict(fn: (r: HonestyRecord) => void): () => void;
}

/** One rule set as the API shows it. */
export interface RuleSetInfo {
  name: string;
  type: 'http' | 'file';
  behavior: 'domain' | 'ipcidr' | 'classical';
  format: 'yaml' | 'text' | 'mrs';
  entries: number;
  badLines: number;
  updatedAt: number | null;
  error: string | null;
  refreshing: boolean;
}

export interface RoutingAccess {
  readonly mode: RouteMode;
  /** Switches the mode now (and keeps it for the next start where settings are saved). */
  setMode(mode: RouteMode): Promise<void>;
  table(): RuleTable;
  ruleSets(): RuleSetInfo[];
  /** Fetches (or re-reads) a rule set now; null: no such set. */
  refresh(name: string): Promise<RuleSetInfo | null>;
  errors(): Array<{ source: string; line: number; text: string; message: string }>;
  /** Whether the user's rules replace the default table. */
  readonly custom: boolean;
  /** Reads (and with `apply`, saves) a Clash config's routing; undefined where settings cannot be saved. */
  importRules?(request: z.output<typeof ruleImportRequestSchema>): Promise<RuleImportResult>;
}

export interface SettingsAccess {
  get(): Settings;
  /** Validates and saves (and applies what can change live); throws GH_ERR_CONFIG_INVALID naming the field it refuses. */
  update(
    patch: Partial<Settings>,
  ): { settings: Settings; restartRequired: string[] } | Promise<{ settings: Settings; restartRequired: string[] }>;
}

export interface ExitCheckAccess {
  readonly last: ExitInfoDto | null;
  check(): Promise<ExitInfoDto>;
  onChange(fn: (e: ExitInfoDto) => void): () => void;
}

/** What only the desktop app can do: the OS's login item, and starting itself again. */
export interface DesktopAccess {
  startAtLogin: { get(): boolean; set(on: boolean): void };
  restart(): void;
}

export interface SystemProxyControl {
  state(): Promise<SysproxyState>;
  setEnabled(enabled: boolean): Promise<SysproxyState>;
  onEvent(fn: (ev: { type: string; message: string }) => void): () => void;
}
