import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import { useTranslation } from 'react-i18next';
import { settingsUpdateSchema } from '../../../core/api/contract.js';
import { LANGUAGE_NAMES } from '../../../core/api/catalog/index.js';
import { useActions, useApp } from '../components/context.js';
import { formatNumber } from '../format.js';
import type { Settings as SettingsDto } from '../store/types.js';
import { detach } from '../detach.js';
import { RoutingSettings } from '../components/Routing.js';
import { ProtocolOrderOptions } from '../components/ProtocolOrder.js';
import { NetworkLesson } from '../components/NetworkLesson.js';
import { NetworkProfiles } from '../components/NetworkProfiles.js';
import { ShareNetwork } from '../components/ShareNetwork.js';

interface Form {
  listen: string;
  authFile: string;
  countryAllow: string;
  countryDeny: string;
  preferProto: SettingsDto['preferProto'];
  intervalS: string;
  toleranceMs: string;
  url: string;
  drainGraceMin: string;
  /** One URL per line. */
  listSources: string;
  /** "openvpn,sstp", "sstp,openvpn", "openvpn" or "sstp". */
  protocols: string;
  language: SettingsDto['language'];
  notifications: SettingsDto['notifications'];
  startAtLogin: boolean | null;
  checkNodes: boolean;
  /** One http:// URL per line; empty: the built-in checks. */
  checkUrls: string;
  encryptedDns: boolean;
  httpsOnly: boolean;
  killSwitch: boolean;
}

const toForm = (s: SettingsDto): Form => ({
  listen: s.listen,
  authFile: s.authFile ?? '',
  countryAllow: s.countryAllow.join(', '),
  countryDeny: s.countryDeny.join(', '),
  preferProto: s.preferProto,
  intervalS: String(Math.round(s.autoSelect.intervalMs / 1000)),
  toleranceMs: String(s.autoSelect.toleranceMs),
  url: s.autoSelect.url,
  drainGraceMin: String(Math.round(s.drainGraceMs / 60_000)),
  listSources: s.listSources.join('\n'),
  protocols: s.protocols.join(','),
  language: s.language,
  notifications: { ...s.notifications },
  startAtLogin: s.startAtLogin,
  checkNodes: s.privacy.checkNodes,
  checkUrls: (s.privacy.checkUrls ?? []).join('\n'),
  encryptedDns: s.privacy.encryptedDns,
  httpsOnly: s.privacy.httpsOnly,
  killSwitch: s.killSwitch,
});

/** A field's error in the UI language (zod's messages are English): by field first, then by kind of problem. */
function validationMessage(
  field: keyof Form,
  issue: { code: string; message: string; minimum?: unknown; maximum?: unknown },
  t: (k: string, o?: Record<string, unknown>) => string,
): string {
  const byField: Partial<Record<keyof Form, string>> = {
    listen: 'validation.hostPort',
    countryAllow: 'validation.country',
    countryDeny: 'validation.country',
    url: 'validation.url',
    listSources: 'validation.url',
    checkUrls: 'validation.url',
    protocols: 'validation.protocols',
  };
  const key = byField[field];
  if (key) return t(key);
  // The form asks seconds and minutes where the settings hold milliseconds.
  const scale = field === 'intervalS' ? 1000 : field === 'drainGraceMin' ? 60_000 : 1;
  if (issue.code === 'too_small') return t('validation.tooSmall', { min: formatNumber(Number(issue.minimum) / scale) });
  if (issue.code === 'too_big') return t('validation.tooBig', { max: formatNumber(Number(issue.maximum) / scale) });
  if (issue.code === 'invalid_type') return t('validation.number');
  return t('validation.invalid');
}

const codes = (text: string): string[] =>
  text
    .split(/[\s,]+/)
    .map((c) => c.trim().toUpperCase())
    .filter(Boolean);

function fromForm(f: Form): Partial<SettingsDto> {
  return {
    listen: f.listen.trim(),
    authFile: f.authFile.trim() || null,
    countryAllow: codes(f.countryAllow),
    countryDeny: codes(f.countryDeny),
    preferProto: f.preferProto,
    autoSelect: { intervalMs: Number(f.intervalS) * 1000, toleranceMs: Number(f.toleranceMs), url: f.url.trim() },
    drainGraceMs: Number(f.drainGraceMin) * 60_000,
    listSources: f.listSources
      .split(/\s+/)
      .map((u) => u.trim())
      .filter(Boolean),
    protocols: f.protocols.split(',') as SettingsDto['protocols'],
    language: f.language,
    notifications: f.notifications,
    ...(f.startAtLogin !== null ? { startAtLogin: f.startAtLogin } : {}),
    privacy: {
      checkNodes: f.checkNodes,
      checkUrls: lines(f.checkUrls).length > 0 ? lines(f.checkUrls) : null,
      encryptedDns: f.encryptedDns,
      httpsOnly: f.httpsOnly,
    },
    killSwitch: f.killSwitch,
  };
}

const lines = (text: string): string[] =>
  text
    .split(/\s+/)
    .map((u) => u.trim())
    .filter(Boolean);

/** Which setting each form field edits. */
const SETTING_OF: Record<keyof Form, keyof SettingsDto> = {
  listen: 'listen',
  authFile: 'authFile',
  countryAllow: 'countryAllow',
  countryDeny: 'countryDeny',
  preferProto: 'preferProto',
  intervalS: 'autoSelect',
  toleranceMs: 'autoSelect',
  url: 'autoSelect',
  drainGraceMin: 'drainGraceMs',
  listSources: 'listSources',
  protocols: 'protocols',
  language: 'language',
  notifications: 'notifications',
  startAtLogin: 'startAtLogin',
  checkNodes: 'privacy',
  checkUrls: 'privacy',
  encryptedDns: 'privacy',
  httpsOnly: 'privacy',
  killSwitch: 'killSwitch',
};

const FIELD_OF: Record<string, keyof Form> = {
  listen: 'listen',
  authFile: 'authFile',
  countryAllow: 'countryAllow',
  countryDeny: 'countryDeny',
  'autoSelect.intervalMs': 'intervalS',
  'autoSelect.toleranceMs': 'toleranceMs',
  'autoSelect.url': 'url',
  drainGraceMs: 'drainGraceMin',
  listSources: 'listSources',
  privacy: 'checkUrls',
};

export function Settings() {
  const { t } = useTranslation();
  const settings = useApp((s) => s.settings);
  const state = useApp((s) => s.settingsState);
  const coreError = useApp((s) => s.settingsError);
  const restartRequired = useApp((s) => s.restartRequired);
  const desktop = useApp((s) => s.status?.desktop ?? false);
  const privacy = useApp((s) => s.status?.privacy ?? null);
  const actions = useActions();
  const [form, setForm] = useState<Form | null>(settings ? toForm(settings) : null);
  // The fields the user changed: only those are saved, and only those survive a change made
  // elsewhere (the tray, another window) while this form is open; the rest follow the core.
  const [dirty, setDirty] = useState<ReadonlySet<keyof Form>>(new Set());
  const [base, setBase] = useState<SettingsDto | null>(settings);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<keyof Form, string>>>({});
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    if (!settings || settings === base) return;
    setBase(settings);
    setForm((f) => {
      const fresh = toForm(settings);
      if (!f) return fresh;
      for (const k of dirty) (fresh as unknown as Record<string, unknown>)[k] = f[k];
      return fresh;
    });
  }, [settings, base, dirty]);

  if (state === 'loading' || !form)
    return state === 'error' ? (
      <p role="alert">{t('settings.error', { message: coreError })}</p>
    ) : (
      <p className="muted" aria-busy="true">
        {t('settings.loading')}
      </p>
    );

  const set = <K extends keyof Form>(k: K, v: Form[K]) => {
    setForm({ ...form, [k]: v });
    setDirty(new Set([...dirty, k]));
    setSaved(false);
    // An error said about a field goes when the user changes that field.
    if (fieldErrors[k]) setFieldErrors({ ...fieldErrors, [k]: undefined });
  };
  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    // Only what the user changed: a value fixed on the command line, or changed from the tray
    // meanwhile, is never sent back.
    const all = fromForm(form);
    const edited = new Set([...dirty].map((k) => SETTING_OF[k]));
    const patch = Object.fromEntries(
      Object.entries(all).filter(
        ([k, v]) =>
          edited.has(k as keyof SettingsDto) &&
          JSON.stringify(v) !== JSON.stringify(settings?.[k as keyof SettingsDto]),
      ),
    ) as Partial<SettingsDto>;
    // Validated here first (the same schema the core uses), so a typo is shown at its field.
    const parsed = settingsUpdateSchema.safeParse(patch);
    if (!parsed.success) {
      const errs: Partial<Record<keyof Form, string>> = {};
      for (const issue of parsed.error.issues) {
        const f = FIELD_OF[issue.path.join('.')] ?? FIELD_OF[String(issue.path[0])];
        if (f && !errs[f]) errs[f] = validationMessage(f, issue, t);
      }
      setFieldErrors(errs);
      return;
    }
    setFieldErrors({});
    const r = await actions.saveSettings(parsed.data);
    if (r.ok) {
      setForm(toForm(r.value.settings));
      setBase(r.value.settings);
      setDirty(new Set());
      setSaved(true);
    }
  };
  const field = (k: keyof Form, label: string, input: ReactElement) => (
    <div className="field">
      <label htmlFor={`set-${k}`}>{label}</label>
      {input}
      {fieldErrors[k] ? (
        <p id={`err-${k}`} role="alert" className="field-error">
          {fieldErrors[k]}
        </p>
      ) : null}
    </div>
  );
  const text = (
    k: Exclude<
      keyof Form,
      | 'preferProto'
      | 'language'
      | 'notifications'
      | 'listSources'
      | 'protocols'
      | 'startAtLogin'
      | 'checkNodes'
      | 'checkUrls'
      | 'encryptedDns'
      | 'httpsOnly'
      | 'killSwitch'
    >,
    type = 'text',
  ) => (
    // Addresses, paths, URLs, codes and numbers read left to right, in a right-to-left page too.
    <input
      id={`set-${k}`}
      type={type}
      dir="ltr"
      value={form[k]}
      aria-invalid={!!fieldErrors[k]}
      aria-describedby={fieldErrors[k] ? `err-${k}` : undefined}
      onChange={(e) => set(k, e.target.value)}
    />
  );
  /** A list of URLs, one a line, with its hint above: the list sources, the honesty check pages. */
  const urlList = (k: 'listSources' | 'checkUrls', rows: number, placeholder: string) => (
    <>
      <p className="muted hint" id={`hint-${k}`}>
        {t(`settings.${k}Hint`)}
      </p>
      <textarea
        id={`set-${k}`}
        dir="ltr"
        rows={rows}
        spellCheck={false}
        value={form[k]}
        placeholder={placeholder}
        aria-invalid={!!fieldErrors[k]}
        aria-describedby={fieldErrors[k] ? `err-${k} hint-${k}` : `hint-${k}`}
        onChange={(e) => set(k, e.target.value)}
      />
    </>
  );
  return (
    <section aria-labelledby="settings-h" className="view">
      <h2 id="settings-h">{t('settings.title')}</h2>
      <form onSubmit={(e) => detach(onSubmit(e))} className="settings" noValidate>
        {field('listen', t('settings.listen'), text('listen'))}
        {field('authFile', t('settings.authFile'), text('authFile'))}
        {field('countryAllow', t('settings.countryAllow'), text('countryAllow'))}
        {field('countryDeny', t('settings.countryDeny'), text('countryDeny'))}
        {field(
          'preferProto',
          t('settings.preferProto'),
          <select
            id="set-preferProto"
            value={form.preferProto}
            onChange={(e) => set('preferProto', e.target.value as Form['preferProto'])}
          >
            <option value="any">{t('settings.any')}</option>
            <option value="tcp">TCP</option>
            <option value="udp">UDP</option>
          </select>,
        )}
        {field(
          'protocols',
          t('settings.protocols'),
          <>
            <p className="muted hint" id="hint-protocols">
              {t('settings.protocolsHint')}
            </p>
            <select
              id="set-protocols"
              value={form.protocols}
              aria-describedby="hint-protocols"
              onChange={(e) => set('protocols', e.target.value)}
            >
              <ProtocolOrderOptions current={form.protocols} />
            </select>
            <NetworkLesson />
          </>,
        )}
        {field('intervalS', t('settings.intervalS'), text('intervalS', 'number'))}
        {field('toleranceMs', t('settings.toleranceMs'), text('toleranceMs', 'number'))}
        {field('url', t('settings.testUrl'), text('url', 'url'))}
        {field('drainGraceMin', t('settings.drainGraceMin'), text('drainGraceMin', 'number'))}
        {field('listSources', t('settings.listSources'), urlList('listSources', 3, 'https://example.org/vpngate.csv'))}
        {field(
          'language',
          t('settings.language'),
          <select
            id="set-language"
            value={form.language}
            onChange={(e) => set('language', e.target.value as Form['language'])}
          >
            <option value="auto">{t('settings.languageAuto')}</option>
            {Object.entries(LANGUAGE_NAMES).map(([code, name]) => (
              <option key={code} value={code} lang={code}>
                {name}
              </option>
            ))}
          </select>,
        )}
        {form.startAtLogin !== null ? (
          <label className="check">
            <input
              type="checkbox"
              checked={form.startAtLogin}
              onChange={(e) => set('startAtLogin', e.target.checked)}
            />{' '}
            {t('settings.startAtLogin')}
          </label>
        ) : null}
        <fieldset className="field">
          <legend>{t('settings.notifications')}</legend>
          {(['switched', 'lost', 'sysproxyChanged'] as const).map((k) => (
            <label key={k} className="check">
              <input
                type="checkbox"
                checked={form.notifications[k]}
                onChange={(e) => set('notifications', { ...form.notifications, [k]: e.target.checked })}
              />{' '}
              {t(`settings.notify.${k}`)}
            </label>
          ))}
        </fieldset>
        <fieldset className="field privacy" data-testid="privacy">
          <legend>{t('settings.privacy')}</legend>
          {(['checkNodes', 'encryptedDns', 'httpsOnly', 'killSwitch'] as const).map((k) => (
            <div key={k}>
              <label className="check">
                <input
                  type="checkbox"
                  id={`set-${k}`}
                  checked={form[k]}
                  aria-describedby={`hint-${k}`}
                  onChange={(e) => set(k, e.target.checked)}
                />{' '}
                {t(`settings.${k}`)}
              </label>
              <p className="muted hint" id={`hint-${k}`}>
                {t(`settings.${k}Hint`)}
              </p>
              {k === 'encryptedDns' && privacy && privacy.encryptedDns !== privacy.encryptedDnsNext ? (
                // A tunnel resolves names as it was opened: say so rather than let it look applied.
                <p className="muted hint" role="status" data-testid="encrypted-dns-next">
                  {t(privacy.encryptedDnsNext ? 'settings.encryptedDnsNextOn' : 'settings.encryptedDnsNextOff')}
                </p>
              ) : null}
            </div>
          ))}
          {form.checkNodes
            ? field(
                'checkUrls',
                t('settings.checkUrls'),
                urlList('checkUrls', 2, 'http://connectivitycheck.gstatic.com/generate_204'),
              )
            : null}
        </fieldset>
        {coreError ? (
          <p role="alert" className="field-error">
            {coreError}
          </p>
        ) : null}
        {saved ? (
          <div role="status" className="saved">
            {restartRequired.length
              ? t('settings.restart', {
                  keys: restartRequired
                    .map((k) => t(`settings.names.${k}`, { defaultValue: k }))
                    .join(t('settings.listSeparator')),
                })
              : t('settings.saved')}
            {restartRequired.length && desktop ? (
              <>
                {' '}
                <button type="button" onClick={() => detach(actions.restart())}>
                  {t('settings.restartNow')}
                </button>
              </>
            ) : null}
          </div>
        ) : null}
        <button type="submit">{t('settings.save')}</button>
      </form>
      <RoutingSettings />
      <NetworkProfiles />
      <ShareNetwork />
    </section>
  );
}
