import { useTranslation } from 'react-i18next';
import type { View } from '../store/types.js';
import { useActions, useApp } from './context.js';

const VIEWS: View[] = ['overview', 'nodes', 'latency', 'connections', 'logs', 'settings'];

export function Header() {
  const { t } = useTranslation();
  const view = useApp((s) => s.view);
  const setView = useApp((s) => s.setView);
  const mode = useApp((s) => s.status?.mode ?? null);
  const egress = useApp((s) => s.status?.egress ?? null);
  const sysproxy = useApp((s) => s.sysproxy);
  const actions = useActions();
  return (
    <header className="header">
      <h1 className="brand">{t('app.title')}</h1>
      <nav aria-label={t('app.nav')}>
        <ul role="tablist" className="tabs">
          {VIEWS.map((v) => (
            <li key={v} role="presentation">
              <button role="tab" type="button" aria-selected={view === v} className={view === v ? 'tab active' : 'tab'} onClick={() => setView(v)}>
                {t(`nav.${v}`)}
              </button>
            </li>
          ))}
        </ul>
      </nav>
      <div className="switches">
        <label className="switch">
          <input type="checkbox" role="switch" checked={mode === 'auto'} disabled={mode === null || egress === 'direct'} onChange={(e) => void actions.setAuto(e.target.checked)} />
          <span>{t('header.autoSelect')}</span>
        </label>
        {sysproxy?.supported ? (
          <label className="switch">
            <input type="checkbox" role="switch" checked={sysproxy.enabled} onChange={(e) => void actions.setSystemProxy(e.target.checked)} />
            <span>{t('header.systemProxy')}</span>
          </label>
        ) : null}
      </div>
    </header>
  );
}
