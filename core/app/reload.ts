import { formatEndpoint, type Logger } from '../common/index.js';
import type { EgressManager } from '../egress/index.js';
import type { SwitchController } from '../groups/index.js';
import type { Selector } from '../selector/index.js';
import type { ProxyServer } from '../proxy/index.js';
import { protocolOptionsOf, type GatehopConfig } from './config.js';

/** What a reload did: the config keys it applied, and those that keep their old value until a restart. */
export interface ReloadOutcome {
  applied: string[];
  restartRequired: string[];
  /** Where the proxy listens after the reload. */
  listen: string;
}

/** Config keys a running core takes over live (ReloadTargets.apply); every other key needs a restart. */
// `tunnel` is read per tunnel opened: a change applies to the next one, no restart needed.
// `vpngate` and `upstream` apply to the next list fetch, probe and tunnel.
const LIVE_KEYS = new Set<keyof GatehopConfig>([
  'listen',
  'proxy',
  'selector',
  'groups',
  'health',
  'switching',
  'tunnel',
  'vpngate',
  'upstream',
  'exitCheck',
  'leakTest',
  'mode',
  'rules',
  'subRules',
  'ruleProviders',
  'geosite',
  'sniffPorts',
  // Read per check, per flow and per tunnel opened.
  'honesty',
  'dohServers',
  'privacy',
  // Old names: nothing runs on them.
  'notices',
]);

/** Top-level config keys whose value differs (by content). */
export function changedKeys(prev: GatehopConfig, next: GatehopConfig): Array<keyof GatehopConfig> {
  return (Object.keys(next) as Array<keyof GatehopConfig>).filter(
    (k) => JSON.stringify(prev[k]) !== JSON.stringify(next[k]),
  );
}

/**
 * The kill switch is read when Gatehop goes away (the running config's): live. The rest of
 * `systemProxy` (bypass, PAC, guard) is what was applied at start.
 */
function onlyKillSwitchDiffers(prev: GatehopConfig, next: GatehopConfig): boolean {
  const rest = (c: GatehopConfig) => JSON.stringify({ ...c.systemProxy, killSwitch: null });
  return rest(prev) === rest(next);
}

export interface ReloadTargets {
  proxy: ProxyServer;
  manager: EgressManager | null;
  controller: SwitchController | null;
  selector: Selector | null;
  /** Takes new source options and the dialer for list fetches (vpngate, upstream). */
  nodeList?: { apply(next: GatehopConfig): void } | null;
  /** Swaps the rule table (mode, rules, rule sets); open flows keep their decisions. */
  routing?: { apply(next: GatehopConfig): void } | null;
  /** The honesty checks' background pace. */
  honesty?: { reconfigure(): void } | null;
}

/**
 * Applies a validated config to a running core without dropping a session: the proxy listener
 * first (bind the new address, then close the old one; a failure to bind throws and leaves the
 * old config in force), then proxy limits, selector, switching, groups and health. The caller
 * keeps `next` as the running config only when this resolves.
 */
export async function applyConfig(
  t: ReloadTargets,
  prev: GatehopConfig,
  next: GatehopConfig,
  logger: Logger,
): Promise<ReloadOutcome> {
  const changed = changedKeys(prev, next);
  const live = (k: keyof GatehopConfig): boolean =>
    LIVE_KEYS.has(k) || (k === 'systemProxy' && onlyKillSwitchDiffers(prev, next));
  const applied = changed.filter(live);
  const restartRequired = changed.filter((k) => !live(k));
  // Unchanged, the proxy stays where it is bound (a configured port 0 is a real port by now).
  const bound = t.proxy.address;
  let listen = formatEndpoint(bound ?? prev.listen);
  if (changed.includes('listen') || changed.includes('proxy')) {
    listen = formatEndpoint(
      await t.proxy.reconfigure({ ...next.proxy, host: next.listen.host, port: next.listen.port }),
    );
  }
  if (changed.includes('selector')) t.selector?.updateOptions(next.selector);
  if (changed.includes('switching')) {
    t.manager?.updateOptions({
      drainGraceMs: next.switching.drainGraceMs,
      maxDraining: next.switching.maxDraining,
      interruptExistingConnections: next.switching.interruptExistingConnections,
    });
  }
  if (changed.includes('groups') || changed.includes('health') || changed.includes('tunnel')) {
    t.controller?.reconfigure(next.groups, next.health, protocolOptionsOf(next));
  }
  if (changed.includes('vpngate') || changed.includes('upstream')) t.nodeList?.apply(next);
  if (['mode', 'rules', 'subRules', 'ruleProviders', 'geosite'].some((k) => changed.includes(k as keyof GatehopConfig)))
    t.routing?.apply(next);
  // After the caller takes `next` as the running config: the sweep reads it.
  if (changed.includes('honesty')) queueMicrotask(() => t.honesty?.reconfigure());
  logger.info(
    { event: 'config-reloaded', applied, restartRequired, listen },
    changed.length === 0
      ? 'config reloaded: nothing changed'
      : `config reloaded: ${applied.join(', ') || 'nothing'} applied${restartRequired.length ? `; ${restartRequired.join(', ')} after a restart` : ''}`,
  );
  return { applied, restartRequired, listen };
}
