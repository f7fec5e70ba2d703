import type { KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { View } from '../store/types.js';
import { useActions, useApp } from './context.js';
import { detach } from '../detach.js';
import { RouteModeSwitch } from './Routing.js';

const VIEWS: View[] = ['overview', 'nodes', 'latency', 'connections', 'traffic', 'logs', 'settings'];

/** The tab id and panel id of a view, so the tablist and the one tabpanel name each other. */
export const tabId = (v: View): string => `tab-${v}`;
export const panelId = (v: View): string => `panel-${v}`;

export function Header() {
  const { t } = useTranslation();
  const view = useApp((s) => s.view);
  const setView = useApp((s) => s.setView);
  const mode = useApp((s) => s.status?.mode ?? null);
  const egress = useApp((s) => s.status?.egress ?? null);
  const sysproxy = useApp((s) => s.sysproxy);
  const actions = useActions();
  // Arrow keys move between tabs (mirrored right to left), Home and End to the first and last; the
  // selected tab is the only one in the Tab order (a roving tabindex).
  const onKeyDown = (e: KeyboardEvent<HTMLButtonElement>): void => {
    const rtl = document.documentElement.dir === 'rtl';
    const i = VIEWS.indexOf(view);
    const step: Record<string, number> = {
      ArrowRight: rtl ? -1 : 1,
      ArrowLeft: rtl ? 1 : -1,
      Home: -i,
      End: VIEWS.length - 1 - i,
    };
    if (!(e.key in step)) return;
    e.preventDefault();
    const next = VIEWS[(i + step[e.key]! + VIEWS.length) % VIEWS.length]!;
    setView(next);
    document.getElementById(tabId(next))?.focus();
  };
  return (
    <header className="header">
      <h1 className="brand">{t('app.title')}</h1>
      <nav aria-label={t('app.nav')}>
        <div role="tablist" aria-label={t('app.nav')} className="tabs">
          {VIEWS.map((v) => (
            <button
              key={v}
              id={tabId(v)}
              role="tab"
              type="button"
              aria-selected={view === v}
              aria-controls={panelId(v)}
              tabIndex={view === v ? 0 : -1}
              className={view === v ? 'tab active' : 'tab'}
              onClick={() => setView(v)}
              onKeyDown={onKeyDown}
            >
              {t(`nav.${v}`)}
            </button>
          ))}
        </div>
      </nav>
      <div className="switches">
        <RouteModeSwitch compact />
        <label className="switch">
          <input
            type="checkbox"
            role="switch"
            checked={mode === 'auto'}
            disabled={mode === null || egress === 'direct'}
            onChange={(e) => detach(actions.setAuto(e.target.checked))}
          />
          <span>{t('header.autoSelect')}</span>
        </label>
        {sysproxy?.supported ? (
          <label className="switch">
            <input
              type="checkbox"
              role="switch"
              checked={sysproxy.enabled}
              onChange={(e) => detach(actions.setSystemProxy(e.target.checked))}
            />
            <span>{t('header.systemProxy')}</span>
          </label>
        ) : null}
      </div>
    </header>
  );
}
