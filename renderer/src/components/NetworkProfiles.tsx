import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ProfileChoicesView, ProfilesStateView } from '../../../core/api/schemas.js';
import { describeProfileChoices, type Language } from '../../../core/api/catalog/index.js';
import { detach } from '../detach.js';
import { useActions } from './context.js';
import { useCoreState } from './use-core-state.js';

/** How often the card looks again (the network may change under it; the core applies profiles itself). */
const REFRESH_MS = 5_000;
/** The default order (config tunnel.protocols): a profile's first protocol goes before the other two in it. */
const PROTOCOLS = ['openvpn', 'sevpn', 'sstp'] as const;
const PROTOCOL_NAMES = { openvpn: 'OpenVPN', sstp: 'SSTP', sevpn: 'SE-VPN' } as const;
type Mode = NonNullable<ProfileChoicesView['mode']>;
type Protocol = (typeof PROTOCOLS)[number];

/**
 * "A profile per network" (#64): the network this computer is on, the profile in force here, a
 * form that saves one for this network (each choice may be left as it is), and the saved ones with
 * what each changes. The core decides which applies (core/profiles); this card only names them.
 */
export function NetworkProfiles() {
  const { t, i18n } = useTranslation();
  const actions = useActions();
  const { state, setState, unavailable, busy, run } = useCoreState<ProfilesStateView>(actions.getProfiles, REFRESH_MS);
  const [name, setName] = useState('');
  const [mode, setMode] = useState<Mode | ''>('');
  const [https, setHttps] = useState<'' | 'on' | 'off'>('');
  const [first, setFirst] = useState<Protocol | ''>('');

  if (unavailable) return null;
  if (!state)
    return (
      <p className="muted" aria-busy="true">
        {t('profiles.loading')}
      </p>
    );

  const lang = i18n.language as Language;
  const offline = state.network.key === 'offline';
  const choices: ProfileChoicesView = {
    ...(mode ? { mode } : {}),
    ...(https ? { httpsOnly: https === 'on' } : {}),
    ...(first ? { protocols: [first, ...PROTOCOLS.filter((p) => p !== first)] } : {}),
  };
  const nothing = Object.keys(choices).length === 0;
  const save = () =>
    run(async () => {
      const r = await actions.saveProfile({ name: name.trim(), choices });
      if (r.ok) setState(r.value);
    });
  const remove = (network: string, profileName: string) =>
    run(async () => {
      if (!window.confirm(t('profiles.removeConfirm', { name: profileName }))) return;
      const r = await actions.removeProfile(network);
      if (r.ok) setState(r.value);
    });

  return (
    <article className="card wide" aria-labelledby="profiles-h" data-testid="profiles">
      <h3 id="profiles-h">{t('profiles.title')}</h3>
      <p className="muted" id="hint-profiles">
        {t('profiles.help')}
      </p>
      <p role="status" data-testid="profiles-here">
        {offline ? (
          t('profiles.offline')
        ) : (
          <>
            {t('profiles.here', { network: '' })}
            <bdi dir="ltr">{state.network.label}</bdi>
            {' · '}
            {state.applied && state.applied.network === state.network.key
              ? t('profiles.inForce', { name: state.applied.name })
              : t('profiles.noneHere')}
          </>
        )}
      </p>
      <form
        className="profile-form"
        aria-describedby="hint-profiles"
        onSubmit={(e) => {
          e.preventDefault();
          detach(save());
        }}
      >
        <label>
          {t('profiles.name')}
          <input
            type="text"
            maxLength={64}
            value={name}
            placeholder={t('profiles.namePlaceholder')}
            onChange={(e) => setName(e.target.value)}
          />
        </label>
        <label>
          {t('profiles.mode')}
          <select value={mode} onChange={(e) => setMode(e.target.value as Mode | '')}>
            <option value="">{t('profiles.keep')}</option>
            {(['rule', 'global', 'direct'] as const).map((m) => (
              <option key={m} value={m}>
                {t(`routing.mode.${m}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('profiles.httpsOnly')}
          <select value={https} onChange={(e) => setHttps(e.target.value as '' | 'on' | 'off')}>
            <option value="">{t('profiles.keep')}</option>
            <option value="on">{t('profiles.on')}</option>
            <option value="off">{t('profiles.off')}</option>
          </select>
        </label>
        <label>
          {t('profiles.first')}
          <select value={first} onChange={(e) => setFirst(e.target.value as Protocol | '')}>
            <option value="">{t('profiles.keep')}</option>
            {PROTOCOLS.map((p) => (
              <option key={p} value={p}>
                {PROTOCOL_NAMES[p]}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={busy || offline || name.trim() === '' || nothing}>
          {t('profiles.save')}
        </button>
      </form>
      {nothing && name.trim() !== '' ? <p className="muted">{t('profiles.pickOne')}</p> : null}
      {state.profiles.length === 0 ? (
        <p className="muted">{t('profiles.none')}</p>
      ) : (
        <ul className="drain-list" aria-label={t('profiles.saved')}>
          {state.profiles.map((p) => (
            <li key={p.network} className="drain-item" data-testid="profile">
              <span className="drain-host">
                {p.name}{' '}
                <span className="muted">
                  · {p.network === state.network.key ? t('profiles.thisNetwork') : <bdi dir="ltr">{p.label}</bdi>}
                </span>
              </span>
              <span>{describeProfileChoices(lang, p.choices)}</span>
              <span className="row">
                <button type="button" disabled={busy} onClick={() => detach(remove(p.network, p.name))}>
                  {t('profiles.remove')}
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
    </article>
  );
}
