import { useTranslation } from 'react-i18next';
import { useApp } from './context.js';

/**
 * What goes through Gatehop and what does not, in plain words (#46): a proxy protects only the
 * programs that use it, and a user in a filtered network must know which ones leak. Reads the
 * system proxy's state and the kill switch; says what a stop would do.
 */
export function Protection() {
  const { t } = useTranslation();
  const sysproxy = useApp((s) => s.sysproxy);
  const killSwitch = useApp((s) => s.settings?.killSwitch ?? null);
  const viaSystem = sysproxy?.enabled ?? false;
  const capture = useApp((s) => s.status?.capture?.available ?? false);
  return (
    <article className="card wide" aria-labelledby="protection-h" data-testid="protection">
      <h3 id="protection-h">{t('protection.title')}</h3>
      <p className="muted">{t('protection.through')}</p>
      {/* Each line carries its own mark (✓, ⚠): no list bullets beside them. */}
      <ul className="marks">
        {viaSystem ? <li data-testid="protection-system">✓ {t('protection.systemOn')}</li> : null}
        <li>✓ {t('protection.configured')}</li>
        {capture ? <li data-testid="protection-captured">✓ {t('protection.captured')}</li> : null}
      </ul>
      {viaSystem ? null : (
        <p className="muted" data-testid="protection-system">
          {t('protection.systemOff')}
        </p>
      )}
      <p className="muted">{t('protection.around')}</p>
      <ul className="marks">
        <li>⚠ {t(capture ? 'protection.ignoringCapture' : 'protection.ignoring')}</li>
        <li>⚠ {t('protection.udp')}</li>
      </ul>
      {killSwitch === null ? null : (
        <p data-testid="protection-kill-switch">
          {killSwitch
            ? viaSystem
              ? t('protection.killSwitchOn')
              : t('protection.killSwitchIdle')
            : t('protection.killSwitchOff')}
        </p>
      )}
    </article>
  );
}
