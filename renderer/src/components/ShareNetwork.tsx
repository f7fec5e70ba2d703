import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ShareState, SharedDevice } from '../../../core/api/contract.js';
import { detach } from '../detach.js';
import { formatBytes } from '../format.js';
import { useActions } from './context.js';
import { useCoreState } from './use-core-state.js';

/** How often the card reads the devices' counters and enrolments again while it is shown. */
const REFRESH_MS = 5_000;

/**
 * "Share with this network" (#63): one switch for a second listener on this computer's LAN
 * addresses, the devices that may use it (each with its own generated password), a QR code per
 * device that opens its page on the phone, and revoke. Off by default; where the core offers no
 * sharing (an embedding without it), nothing is shown.
 */
export function ShareNetwork() {
  const { t } = useTranslation();
  const actions = useActions();
  const { state, setState, unavailable, busy, run, reload } = useCoreState<ShareState>(actions.getShare, REFRESH_MS);
  const [name, setName] = useState('');
  const [shown, setShown] = useState<{ id: string; url: string; png: string } | null>(null);

  if (unavailable) return null;
  if (!state)
    return (
      <p className="muted" aria-busy="true">
        {t('share.loading')}
      </p>
    );

  const toggle = (on: boolean) =>
    run(async () => {
      const r = await actions.setShare(on);
      if (r.ok) setState(r.value);
      if (!on) setShown(null);
    });
  const add = () =>
    run(async () => {
      const r = await actions.addShareDevice(name);
      if (!r.ok) return;
      setName('');
      // The new device is in the list before its code shows: the code names a device the user can see.
      await reload();
      if (state.listening) await show(r.value.id);
    });
  const show = async (id: string): Promise<void> => {
    const r = await actions.shareDeviceQr(id);
    if (r.ok) setShown({ id, ...r.value });
  };
  const revoke = (d: SharedDevice) =>
    run(async () => {
      if (!window.confirm(t('share.revokeConfirm', { name: d.name }))) return;
      await actions.removeShareDevice(d.id);
      if (shown?.id === d.id) setShown(null);
    });
  const lan = state.addresses[0];

  return (
    <article className="card wide share" aria-labelledby="share-h" data-testid="share">
      <h3 id="share-h">{t('share.title')}</h3>
      <p className="muted" id="hint-share">
        {t('share.help')}
      </p>
      <label className="switch">
        <input
          type="checkbox"
          checked={state.enabled}
          disabled={busy}
          aria-describedby="hint-share"
          data-testid="share-switch"
          onChange={(e) => detach(toggle(e.target.checked))}
        />{' '}
        {t('share.switch')}
      </label>
      <p role="status" data-testid="share-state" className={state.enabled && !state.listening ? 'error' : undefined}>
        {state.listening
          ? lan
            ? t('share.listening', { address: lan.address, port: state.port })
            : t('share.noAddress', { port: state.port })
          : state.enabled
            ? t('share.failed', { why: state.error ?? '' })
            : t('share.off')}
      </p>
      {state.listening && state.addresses.length > 1 ? (
        <p className="muted">
          {t('share.alsoAt', {
            addresses: state.addresses
              .slice(1)
              .map((a) => `${a.address} (${a.interface})`)
              .join(', '),
          })}
        </p>
      ) : null}
      {state.listening ? (
        <p
          data-testid="share-firewall"
          data-state={state.firewall?.state ?? 'unknown'}
          className={state.firewall?.state === 'blocked' ? 'error' : 'muted'}
        >
          {state.firewall?.state === 'open'
            ? t('share.firewallOpen', { port: state.port, tool: state.firewall.tool ?? '' })
            : `${state.firewall?.state === 'blocked' ? `${t('share.firewallBlocked', { port: state.port, tool: state.firewall.tool ?? '' })} ` : ''}${t(
                'share.firewall',
                { port: state.port, network: lan?.cidr ?? '192.168.1.0/24' },
              )}`}
        </p>
      ) : null}
      {state.listening && state.firewall?.state === 'blocked' && state.firewall.opening ? (
        <div className="row" data-testid="share-firewall-open">
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              detach(
                run(async () => {
                  const r = await actions.openShareFirewall();
                  if (r.ok) setState(r.value);
                }),
              )
            }
          >
            {t('share.allowFirewall')}
          </button>
          <code dir="ltr">{state.firewall.opening.join(' && ')}</code>
        </div>
      ) : null}
      <form
        className="share-add"
        onSubmit={(e) => {
          e.preventDefault();
          detach(add());
        }}
      >
        <label htmlFor="share-name">{t('share.deviceName')}</label>
        <input
          id="share-name"
          type="text"
          maxLength={64}
          value={name}
          placeholder={t('share.namePlaceholder')}
          onChange={(e) => setName(e.target.value)}
        />
        <button type="submit" disabled={busy || name.trim() === ''}>
          {t('share.add')}
        </button>
      </form>
      {state.devices.length === 0 ? (
        <p className="muted">{t('share.none')}</p>
      ) : (
        <ul className="drain-list" aria-label={t('share.devices')}>
          {state.devices.map((d) => (
            <li key={d.id} className="drain-item" data-testid="share-device">
              <span className="drain-host">
                {d.name} <span className="muted">· {d.id}</span>
              </span>
              <span>
                {d.enrolledAddress ? t('share.enrolled', { address: d.enrolledAddress }) : t('share.notEnrolled')}
              </span>
              <span>
                {t('share.usage', { count: d.sessionsActive })} · ↓ {formatBytes(d.bytesDown)} ↑{' '}
                {formatBytes(d.bytesUp)}
              </span>
              <span className="row">
                <button type="button" disabled={!state.listening} onClick={() => detach(show(d.id))}>
                  {t('share.showCode')}
                </button>
                <button type="button" disabled={busy} onClick={() => detach(revoke(d))}>
                  {t('share.revoke')}
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      {shown ? (
        <figure className="share-code" data-testid="share-code">
          <img src={shown.png} alt={t('share.codeAlt')} width={264} height={264} />
          <figcaption>
            <p>{t('share.scan')}</p>
            <input
              readOnly
              dir="ltr"
              value={shown.url}
              aria-label={t('share.link')}
              data-testid="share-url"
              onFocus={(e) => e.target.select()}
            />
          </figcaption>
        </figure>
      ) : null}
    </article>
  );
}
