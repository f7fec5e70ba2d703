import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCodes, formatEndpoint, GatehopError, writeFileAtomic, type Logger } from '../common/index.js';
import { settingsSchema, settingsUpdateSchema, type Settings, type SettingsAccess } from '../api/index.js';
import { honestyOptions } from '../honesty/index.js';
import { buildConfig, type ConfigInput, type GatehopConfig } from './config.js';

/**
 * What the user changed in the window, kept in `<data-dir>/settings.json` (written atomically).
 * It is a layer between the config file and the command line: saved settings override the file,
 * flags override both. Only keys the user set are stored, so a new default still reaches them.
 */
const fileSchema = z.object({ version: z.literal(1), settings: settingsUpdateSchema });

export function settingsPath(dataDir: string): string {
  return join(dataDir, 'settings.json');
}

/** settings.json's text as saved settings; throws (JSON or schema) on anything else. */
export function parseSettingsText(text: string): Partial<Settings> {
  return fileSchema.parse(JSON.parse(text)).settings;
}

/** The saved settings, or {} when there are none; an unreadable file is reported and set aside. */
export function loadSavedSettings(dataDir: string, logger?: Logger): Partial<Settings> {
  const path = settingsPath(dataDir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {};
  }
  try {
    return parseSettingsText(text);
  } catch (err) {
    const aside = `${path}.invalid-${Date.now()}`;
    try {
      renameSync(path, aside);
    } catch {
      /* leave it */
    }
    logger?.warn(
      { event: 'settings-invalid', path, aside, err: (err as Error).message },
      `saved settings in ${path} are not valid; moved to ${aside}, using the defaults`,
    );
    return {};
  }
}

/** The saved settings as a config layer. */
export function settingsToConfigInput(s: Partial<Settings>): ConfigInput {
  const out: Record<string, unknown> = {};
  if (s.listen !== undefined) out.listen = s.listen;
  if (s.authFile !== undefined && s.authFile !== null) out.authFile = s.authFile;
  const selector: Record<string, unknown> = {};
  if (s.countryAllow) selector.countryAllow = s.countryAllow;
  if (s.countryDeny) selector.countryDeny = s.countryDeny;
  if (s.preferProto) selector.preferProto = s.preferProto;
  if (Object.keys(selector).length) out.selector = selector;
  if (s.autoSelect)
    out.groups = {
      urlTest: { intervalMs: s.autoSelect.intervalMs, toleranceMs: s.autoSelect.toleranceMs, url: s.autoSelect.url },
    };
  if (s.drainGraceMs !== undefined) out.switching = { drainGraceMs: s.drainGraceMs };
  if (s.listSources !== undefined) out.vpngate = { sources: s.listSources };
  if (s.protocols !== undefined || s.nodeProtocols !== undefined)
    out.tunnel = {
      ...(s.protocols !== undefined ? { protocols: s.protocols } : {}),
      ...(s.nodeProtocols !== undefined ? { nodeProtocols: s.nodeProtocols } : {}),
    };
  if (s.privacy !== undefined) {
    out.honesty = {
      enabled: s.privacy.checkNodes,
      // Named URLs carry no published answer: each is compared with Gatehop's own direct copy.
      ...(s.privacy.checkUrls ? { http: s.privacy.checkUrls.map((url) => ({ url })) } : {}),
    };
    out.privacy = { encryptedDns: s.privacy.encryptedDns, httpsOnly: s.privacy.httpsOnly };
  }
  if (s.killSwitch !== undefined) out.systemProxy = { killSwitch: s.killSwitch };
  if (s.mode !== undefined) out.mode = s.mode;
  if (s.rules) out.rules = s.rules;
  if (s.ruleProviders) out.ruleProviders = s.ruleProviders;
  if (s.subRules) out.subRules = s.subRules;
  return out;
}

/** Config file → saved settings → flags, merged section by section. */
export function layerInputs(fromFile: ConfigInput, saved: Partial<Settings>): ConfigInput {
  const s = settingsToConfigInput(saved);
  const merged: Record<string, unknown> = { ...fromFile, ...s };
  for (const k of [
    'selector',
    'groups',
    'switching',
    'vpngate',
    'tunnel',
    'honesty',
    'privacy',
    'systemProxy',
  ] as const) {
    const a = (fromFile as Record<string, unknown>)[k];
    const b = (s as Record<string, unknown>)[k];
    if (a || b) merged[k] = { ...(a as object), ...(b as object) };
  }
  const urlTest = {
    ...(fromFile.groups?.urlTest ?? {}),
    ...(s.groups?.urlTest ?? {}),
  };
  if (Object.keys(urlTest).length) merged.groups = { ...(merged.groups as object), urlTest };
  if (saved.authFile === null) delete merged.authFile;
  return merged;
}

export const DEFAULT_NOTIFICATIONS: Settings['notifications'] = Object.freeze({
  switched: true,
  lost: true,
  sysproxyChanged: true,
});

/** The settings a config stands for (what the window shows); language and notifications live only in saved settings. */
export function settingsOfConfig(
  c: GatehopConfig,
  language: Settings['language'],
  notifications: Settings['notifications'] = DEFAULT_NOTIFICATIONS,
): Settings {
  return {
    listen: formatEndpoint(c.listen),
    authFile: c.authFile ?? null,
    countryAllow: [...c.selector.countryAllow],
    countryDeny: [...c.selector.countryDeny],
    preferProto: c.selector.preferProto,
    autoSelect: {
      intervalMs: c.groups.urlTest.intervalMs,
      toleranceMs: c.groups.urlTest.toleranceMs,
      url: c.groups.urlTest.url,
    },
    drainGraceMs: c.switching.drainGraceMs,
    listSources: [...c.vpngate.sources],
    protocols: [...c.tunnel.protocols],
    nodeProtocols: Object.fromEntries(Object.entries(c.tunnel.nodeProtocols).map(([k, v]) => [k, [...v]])),
    mode: c.mode,
    rules: c.rules ? [...c.rules] : null,
    ruleProviders: Object.fromEntries(Object.entries(c.ruleProviders).map(([k, v]) => [k, { ...v }])),
    subRules: Object.fromEntries(Object.entries(c.subRules).map(([k, v]) => [k, [...v]])),
    language,
    killSwitch: c.systemProxy.killSwitch,
    notifications: { ...notifications },
    // The desktop app's own (the OS keeps it); the operations layer fills it in where there is one.
    startAtLogin: null,
    privacy: {
      checkNodes: c.honesty.enabled,
      checkUrls:
        JSON.stringify(c.honesty.http) === JSON.stringify(DEFAULT_HONESTY.http)
          ? null
          : c.honesty.http.map((h) => h.url),
      encryptedDns: c.privacy.encryptedDns,
      httpsOnly: c.privacy.httpsOnly,
    },
  };
}

const DEFAULT_HONESTY = honestyOptions();

const FLAG_OF: Record<string, string> = { listen: '--listen', authFile: '--auth-file', killSwitch: '--kill-switch' };

/** Settings keys that the command line fixes. */
function flagKeysOf(flags: ConfigInput): Array<keyof Settings> {
  const out: Array<keyof Settings> = [];
  if (flags.listen !== undefined) out.push('listen');
  if (flags.authFile !== undefined || flags.noAuth !== undefined) out.push('authFile');
  if (flags.systemProxy?.killSwitch !== undefined) out.push('killSwitch');
  return out;
}

/**
 * Keys that change live (the UI's language; the kill switch, read when Gatehop goes away);
 * everything else applies at the next start.
 */
const LIVE = new Set<keyof Settings>(['language', 'notifications', 'startAtLogin', 'killSwitch']);

/**
 * GET/PUT /settings for a running core: validates a change as the next start would see it (the
 * same buildConfig, with the config file and flags around it), saves it, and names what needs a
 * restart because the running core still uses the old value.
 */
export class SettingsFile implements SettingsAccess {
  #saved: Partial<Settings>;
  /** What get() answers: built once per change, not per call (the desktop shell reads it often). */
  #effectiveNow: Settings;

  constructor(
    private running: GatehopConfig,
    private layers: { fromFile: ConfigInput; fromFlags: ConfigInput },
    private readonly logger: Logger,
  ) {
    this.#saved = loadSavedSettings(running.dataDir, logger);
    this.#effectiveNow = this.#effective(this.#saved);
  }

  get(): Settings {
    return this.#effectiveNow;
  }

  update(patch: Partial<Settings>): { settings: Settings; restartRequired: string[] } {
    const parsed = settingsUpdateSchema.safeParse(patch);
    if (!parsed.success) {
      const first = parsed.error.issues[0]!;
      throw new GatehopError(ErrorCodes.CONFIG_INVALID, `${first.path.join('.') || 'settings'}: ${first.message}`);
    }
    // A value given on the command line wins over saved settings: saving it would silently do nothing.
    const fixed = flagKeysOf(this.layers.fromFlags).filter((k) => k in parsed.data);
    if (fixed.length > 0)
      throw new GatehopError(
        ErrorCodes.CONFIG_INVALID,
        `${fixed[0]}: set on the command line (${FLAG_OF[fixed[0]!]}), which wins over saved settings; remove the flag to change it here`,
      );
    // Start at login is the OS's to keep (the desktop app sets it), never saved here.
    const { startAtLogin: _osOwned, ...own } = parsed.data;
    const next = { ...this.#saved, ...own };
    // Validated as the next start will build it: cross-field rules (auth off on a public address) included.
    const config = buildConfig(layerInputs(this.layers.fromFile, next), this.layers.fromFlags);
    const settings = settingsSchema.parse(settingsOfConfig(config, next.language ?? 'auto', next.notifications));
    this.#write(next);
    this.#saved = next;
    this.#effectiveNow = settings;
    const restartRequired = this.restartRequiredFor(Object.keys(parsed.data) as Array<keyof Settings>);
    this.logger.info(
      { event: 'settings-saved', keys: Object.keys(parsed.data), restartRequired },
      `settings saved${restartRequired.length ? `; ${restartRequired.join(', ')} after a restart` : ''}`,
    );
    return { settings, restartRequired };
  }

  /** Of `keys`, those whose saved value the running core does not use yet. */
  restartRequiredFor(keys: Array<keyof Settings>): Array<keyof Settings> {
    const settings = this.#effectiveNow;
    const now = settingsOfConfig(this.running, settings.language, settings.notifications);
    return keys.filter((k) => !LIVE.has(k) && JSON.stringify(settings[k]) !== JSON.stringify(now[k]));
  }

  /** After a reload: the core runs `running` now, built from `layers` (the config file may have changed). */
  rebase(running: GatehopConfig, layers: { fromFile: ConfigInput; fromFlags: ConfigInput }): void {
    this.running = running;
    this.layers = layers;
    this.#effectiveNow = this.#effective(this.#saved);
  }

  #effective(saved: Partial<Settings>): Settings {
    try {
      return settingsOfConfig(
        buildConfig(layerInputs(this.layers.fromFile, saved), this.layers.fromFlags),
        saved.language ?? 'auto',
        saved.notifications,
      );
    } catch {
      return settingsOfConfig(this.running, saved.language ?? 'auto', saved.notifications);
    }
  }

  #write(s: Partial<Settings>): void {
    const path = settingsPath(this.running.dataDir);
    try {
      writeFileAtomic(path, JSON.stringify({ version: 1, settings: s }, null, 1));
    } catch (err) {
      throw new GatehopError(
        ErrorCodes.STORE_FAILED,
        `cannot save settings to ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { cause: err },
      );
    }
  }
}

/** The config a start uses: file, then saved settings, then flags. A saved layer that no longer validates is skipped. */
export function resolveConfig(fromFile: ConfigInput, fromFlags: ConfigInput, logger?: Logger): GatehopConfig {
  const base = buildConfig(fromFile, fromFlags);
  const saved = loadSavedSettings(base.dataDir, logger);
  if (Object.keys(saved).length === 0) return base;
  try {
    return buildConfig(layerInputs(fromFile, saved), fromFlags);
  } catch (err) {
    logger?.warn(
      { event: 'settings-skipped', err: (err as Error).message },
      `saved settings do not validate (${(err as Error).message}); starting without them`,
    );
    return base;
  }
}
