import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { detach } from '../detach.js';
import { useActions } from './context.js';
import type { RuleImportResult } from '../store/types.js';

type Target = 'TUNNEL' | 'DIRECT' | 'REJECT';
const TARGETS: readonly Target[] = ['TUNNEL', 'DIRECT', 'REJECT'];

/**
 * Settings → Routing → Import from a Clash config: the user pastes a mihomo/Clash config or its
 * URL, Gatehop lists the group names its rules send flows to with a guess for each (kept from an
 * earlier import where there was one), the user maps each to the VPN, direct or blocked, and
 * Apply saves the rules, sub-rules and rule sets; the config's mode (a `global` one would send the
 * home network through a node) only where the user ticks it. Nothing of the config's proxies is used.
 */
export function ClashImport() {
  const { t } = useTranslation();
  const actions = useActions();
  const [source, setSource] = useState('');
  const [read, setRead] = useState<RuleImportResult | null>(null);
  const [mapping, setMapping] = useState<Record<string, Target>>({});
  const [takeMode, setTakeMode] = useState(false);
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  const request = () => {
    const s = source.trim();
    return /^https?:\/\/\S+$/i.test(s) ? { url: s } : { config: source };
  };
  const run = async (apply: boolean): Promise<void> => {
    setBusy(true);
    setSaid(null);
    try {
      const r = await actions.importRules({ ...request(), mapping, apply, ...(apply ? { setMode: takeMode } : {}) });
      if (!r.ok) return setSaid({ ok: false, text: r.error.message });
      if (!apply) {
        setRead(r.value);
        setMapping(Object.fromEntries(r.value.targets.map((x) => [x.name, x.use])));
        setTakeMode(false);
        return;
      }
      setRead(null);
      setSource('');
      setSaid({ ok: true, text: t('routing.import.applied', { count: r.value.rules }) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <fieldset className="field" data-testid="clash-import">
      <legend>{t('routing.import.title')}</legend>
      <p className="muted hint" id="hint-clash-import">
        {t('routing.import.help')}
      </p>
      <label htmlFor="clash-import-source">{t('routing.import.source')}</label>
      <textarea
        id="clash-import-source"
        dir="ltr"
        rows={4}
        spellCheck={false}
        value={source}
        placeholder={'https://…/config.yaml\nrules:\n  - DOMAIN-SUFFIX,cn,DIRECT'}
        aria-describedby="hint-clash-import"
        onChange={(e) => {
          setSource(e.target.value);
          setRead(null);
        }}
      />
      <button type="button" disabled={busy || source.trim() === ''} onClick={() => detach(run(false))}>
        {busy && !read ? t('routing.import.reading') : t('routing.import.read')}
      </button>
      {read ? (
        <div data-testid="clash-import-read">
          <p>
            {t('routing.import.summary', {
              count: read.rules,
              sets: read.ruleSets.length,
              subs: read.subRules.length,
            })}
          </p>
          <table className="import-targets">
            <thead>
              <tr>
                <th scope="col">{t('routing.import.name')}</th>
                <th scope="col">{t('routing.import.rules')}</th>
                <th scope="col">{t('routing.import.goesTo')}</th>
              </tr>
            </thead>
            <tbody>
              {read.targets.map((x) => (
                <tr key={x.name}>
                  <td dir="auto">{x.name}</td>
                  <td>{x.rules}</td>
                  <td>
                    {x.why === 'builtin' ? (
                      t(`routing.import.target.${x.use}`)
                    ) : (
                      <>
                        <select
                          aria-label={t('routing.import.mapOne', { name: x.name })}
                          value={mapping[x.name] ?? x.use}
                          onChange={(e) => setMapping({ ...mapping, [x.name]: e.target.value as Target })}
                        >
                          {TARGETS.map((v) => (
                            <option key={v} value={v}>
                              {t(`routing.import.target.${v}`)}
                            </option>
                          ))}
                        </select>{' '}
                        <span className="muted">
                          {x.saved ? t('routing.import.asLastTime') : t(`routing.import.why.${x.why}`)}
                        </span>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {read.skipped.length > 0 ? (
            <ul className="muted">
              {read.skipped.map((s) => (
                <li key={s.what} dir="ltr">
                  {t('routing.import.skipped', { what: s.what, why: s.why })}
                </li>
              ))}
            </ul>
          ) : null}
          {read.mode ? (
            <label className="check">
              <input type="checkbox" checked={takeMode} onChange={(e) => setTakeMode(e.target.checked)} />{' '}
              {t('routing.import.setMode', { mode: t(`routing.mode.${read.mode}`) })}
            </label>
          ) : null}
          <p className="muted hint">{t('routing.import.replaces')}</p>
          <button type="button" disabled={busy} onClick={() => detach(run(true))}>
            {t('routing.import.apply')}
          </button>
        </div>
      ) : null}
      {said ? (
        <p role={said.ok ? 'status' : 'alert'} className={said.ok ? 'saved' : 'field-error'}>
          {said.text}
        </p>
      ) : null}
    </fieldset>
  );
}
