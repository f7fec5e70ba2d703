import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useActions, useApp, useNow } from './context.js';
import { ClashImport } from './ClashImport.js';
import { formatAgo } from '../format.js';
import { detach } from '../detach.js';
import type { RuleProviderSetting } from '../store/types.js';

const MODES = ['rule', 'global', 'direct'] as const;
type Mode = (typeof MODES)[number];

/**
 * A country's maintained list of domestic sites under other endings (a .com bank, a shop), as a
 * mihomo rule set. Only where one is maintained and refreshed daily; served by jsDelivr, which
 * these countries reach where GitHub is slow or filtered.
 */
interface DomesticList {
  name: string;
  provider: RuleProviderSetting;
}

export interface PresetCountry {
  code: string;
  tld: string;
  domestic?: DomesticList;
}

/** The countries offered for "send my country's sites direct", with their domain ending. */
export const PRESET_COUNTRIES: readonly PresetCountry[] = [
  {
    code: 'IR',
    tld: 'ir',
    // Chocolate4U/Iran-clash-rules, ir.txt: Iranian sites outside .ir (built daily).
    domestic: {
      name: 'ir-domestic',
      provider: {
        type: 'http',
        behavior: 'domain',
        format: 'text',
        url: 'https://cdn.jsdelivr.net/gh/chocolate4u/Iran-clash-rules@release/ir.txt',
        interval: 86_400,
      },
    },
  },
  {
    code: 'CN',
    tld: 'cn',
    // Loyalsoldier/clash-rules, direct.txt: sites reachable directly from mainland China (built daily; a YAML list).
    domestic: {
      name: 'cn-domestic',
      provider: {
        type: 'http',
        behavior: 'domain',
        format: 'yaml',
        url: 'https://cdn.jsdelivr.net/gh/Loyalsoldier/clash-rules@release/direct.txt',
        interval: 86_400,
      },
    },
  },
  { code: 'RU', tld: 'ru' },
  { code: 'TR', tld: 'tr' },
  { code: 'VN', tld: 'vn' },
  { code: 'ID', tld: 'id' },
  { code: 'PK', tld: 'pk' },
  { code: 'EG', tld: 'eg' },
  { code: 'SA', tld: 'sa' },
  { code: 'AE', tld: 'ae' },
  { code: 'BY', tld: 'by' },
  { code: 'TM', tld: 'tm' },
  { code: 'MM', tld: 'mm' },
  { code: 'KR', tld: 'kr' },
  { code: 'JP', tld: 'jp' },
  { code: 'TW', tld: 'tw' },
  { code: 'HK', tld: 'hk' },
];

/**
 * The rules of the preset: local names and the LAN, the country's domain ending, its domestic list
 * (by name, before any rule that needs an address) and its addresses direct; the rest through the VPN.
 */
export function presetRules(country: PresetCountry): string[] {
  return [
    'DOMAIN-SUFFIX,localhost,DIRECT',
    'DOMAIN-SUFFIX,local,DIRECT',
    'GEOIP,LAN,DIRECT,no-resolve',
    `DOMAIN-SUFFIX,${country.tld},DIRECT`,
    ...(country.domestic ? [`RULE-SET,${country.domestic.name},DIRECT`] : []),
    `GEOIP,${country.code},DIRECT`,
    'MATCH,TUNNEL',
  ];
}

/** The rule sets after applying the preset: the user's own kept, the country's domestic list added. */
export function presetRuleProviders(
  country: PresetCountry,
  current: Readonly<Record<string, RuleProviderSetting>>,
): Record<string, RuleProviderSetting> {
  return country.domestic ? { ...current, [country.domestic.name]: country.domestic.provider } : { ...current };
}

/** The country the OS language and region suggest (zh-CN → CN, fa → IR), or null. Never applied without the user. */
export function suggestedCountry(languages: readonly string[]): string | null {
  for (const l of languages) {
    const region = /^[a-z]{2,3}[-_]([A-Z]{2})\b/i.exec(l)?.[1]?.toUpperCase();
    if (region && PRESET_COUNTRIES.some((c) => c.code === region)) return region;
    const byLanguage: Record<string, string> = { fa: 'IR', ru: 'RU', tr: 'TR', vi: 'VN', id: 'ID', ur: 'PK', zh: 'CN' };
    const lang = l.slice(0, 2).toLowerCase();
    if (byLanguage[lang]) return byLanguage[lang];
  }
  return null;
}

/** The mode switch: one choice of three, applied at once (the header and Settings both show it). */
export function RouteModeSwitch({ compact = false }: { compact?: boolean }) {
  const { t } = useTranslation();
  const mode = useApp((s) => s.status?.routing?.mode ?? null);
  const actions = useActions();
  if (mode === null) return null;
  if (compact)
    return (
      <label className="switch">
        <span>{t('routing.title')}</span>{' '}
        <select
          value={mode}
          aria-label={t('routing.title')}
          onChange={(e) => detach(actions.setRouteMode(e.target.value as Mode))}
        >
          {MODES.map((m) => (
            <option key={m} value={m}>
              {t(`routing.mode.${m}`)}
            </option>
          ))}
        </select>
      </label>
    );
  return (
    <fieldset className="field" data-testid="route-mode">
      <legend>{t('routing.modeTitle')}</legend>
      {MODES.map((m) => (
        <label key={m} className="check">
          <input
            type="radio"
            name="route-mode"
            value={m}
            checked={mode === m}
            onChange={() => detach(actions.setRouteMode(m))}
          />{' '}
          <strong>{t(`routing.mode.${m}`)}</strong> <span className="muted">{t(`routing.modeHelp.${m}`)}</span>
        </label>
      ))}
    </fieldset>
  );
}

/** Settings → Routing: the mode, the country preset, the user's rules, the rule sets and what was left out. */
export function RoutingSettings() {
  const { t } = useTranslation();
  const routing = useApp((s) => s.status?.routing ?? null);
  const settings = useApp((s) => s.settings);
  const actions = useActions();
  const now = useNow();
  const [rules, setRules] = useState<string | null>(null);
  const [country, setCountry] = useState<string>(
    () => suggestedCountry(typeof navigator === 'undefined' ? [] : navigator.languages) ?? '',
  );
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  if (!routing || !settings) return null;
  const text = rules ?? (settings.rules ?? []).join('\n');
  const save = async (lines: string[] | null, ruleProviders?: Record<string, RuleProviderSetting>): Promise<void> => {
    const r = await actions.saveSettings({ rules: lines, ...(ruleProviders ? { ruleProviders } : {}) });
    if (r.ok) {
      setRules(null);
      setSaid({ ok: true, text: t('routing.rulesSaved') });
      await actions.loadAll();
    } else setSaid({ ok: false, text: r.error.message });
  };
  const lines = (): string[] | null => {
    const l = text
      .split('\n')
      .map((x) => x.trim())
      .filter(Boolean);
    return l.length ? l : null;
  };
  const preset = PRESET_COUNTRIES.find((c) => c.code === country);
  return (
    <section aria-labelledby="routing-h" className="routing">
      <h3 id="routing-h">{t('routing.title')}</h3>
      <RouteModeSwitch />
      <fieldset className="field">
        <legend>{t('routing.preset.title')}</legend>
        <p className="muted hint">{t('routing.preset.help')}</p>
        <label htmlFor="route-country">{t('routing.preset.country')}</label>{' '}
        <select id="route-country" value={country} onChange={(e) => setCountry(e.target.value)}>
          <option value="">{t('routing.preset.choose')}</option>
          {PRESET_COUNTRIES.map((c) => (
            <option key={c.code} value={c.code}>
              {/* The domain ending isolated, so a right-to-left page does not turn "(.ir)" into "(ir.)". */}
              {t(`routing.country.${c.code}`, { defaultValue: c.code })} ({`\u2066.${c.tld}\u2069`})
            </option>
          ))}
        </select>{' '}
        <button
          type="button"
          disabled={!preset}
          onClick={() =>
            preset && detach(save(presetRules(preset), presetRuleProviders(preset, settings.ruleProviders)))
          }
        >
          {t('routing.preset.apply')}
        </button>
        {preset?.domestic ? (
          <p className="muted hint" data-testid="preset-domestic">
            {t('routing.preset.domesticList', {
              name: `\u2066${preset.domestic.name}\u2069`,
              host: `\u2066${new URL(preset.domestic.provider.url ?? '').host}\u2069`,
            })}
          </p>
        ) : null}
      </fieldset>
      <div className="field">
        <label htmlFor="route-rules">{t('routing.rules')}</label>
        <p className="muted hint" id="hint-rules">
          {t('routing.rulesHelp')}
        </p>
        <textarea
          id="route-rules"
          dir="ltr"
          rows={6}
          spellCheck={false}
          value={text}
          placeholder={'DOMAIN-SUFFIX,example,DIRECT\nMATCH,TUNNEL'}
          aria-describedby="hint-rules"
          onChange={(e) => setRules(e.target.value)}
        />
        <button type="button" onClick={() => detach(save(lines()))}>
          {t('routing.saveRules')}
        </button>{' '}
        <button type="button" className="secondary" onClick={() => detach(save(null))}>
          {t('routing.defaultRules')}
        </button>
        {said ? (
          <p role={said.ok ? 'status' : 'alert'} className={said.ok ? 'saved' : 'field-error'}>
            {said.text}
          </p>
        ) : null}
      </div>
      <ClashImport />
      {routing.errors.length > 0 ? (
        <div className="field" role="alert" data-testid="rule-errors">
          <p>{t('routing.errors', { count: routing.errors.length })}</p>
          <ul>
            {routing.errors.map((e) => (
              <li key={`${e.source}:${e.line}:${e.text}`} dir="ltr">
                {t('routing.errorLine', { source: e.source, line: e.line, text: e.text, message: e.message })}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <div className="field">
        <p>{t('routing.ruleSets')}</p>
        {routing.ruleSets.length === 0 ? (
          <p className="muted">{t('routing.noRuleSets')}</p>
        ) : (
          <ul className="rule-sets">
            {routing.ruleSets.map((s) => (
              <li key={s.name} data-testid={`rule-set-${s.name}`}>
                <span dir="ltr">{s.name}</span>{' '}
                {t('routing.ruleSet', {
                  count: s.entries,
                  ago: s.updatedAt ? formatAgo(s.updatedAt, now(), t) : t('routing.never'),
                })}
                {s.error ? <span className="source-failed"> · {s.error}</span> : null}{' '}
                <button
                  type="button"
                  className="secondary"
                  disabled={s.refreshing}
                  aria-label={t('routing.refreshOne', { name: s.name })}
                  onClick={() => detach(actions.refreshRuleSet(s.name))}
                >
                  {t('routing.refresh')}
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
