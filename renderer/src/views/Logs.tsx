import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../components/context.js';

const RANK: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, '10': 10, '20': 20, '30': 30, '40': 40, '50': 50, '60': 60 };
const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

export function Logs() {
  const { t } = useTranslation();
  const logs = useApp((s) => s.logs);
  const level = useApp((s) => s.logLevel);
  const setLevel = useApp((s) => s.setLogLevel);
  const shown = useMemo(() => logs.filter((l) => (RANK[l.level] ?? 30) >= RANK[level]!).slice(-300).reverse(), [logs, level]);
  return (
    <section aria-labelledby="logs-h" className="view">
      <div className="view-head">
        <h2 id="logs-h">{t('logs.title')}</h2>
        <label>
          {t('logs.level')}{' '}
          <select value={level} onChange={(e) => setLevel(e.target.value as (typeof LEVELS)[number])}>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {t(`logs.levels.${l}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      {shown.length === 0 ? (
        <p className="muted">{t('logs.empty')}</p>
      ) : (
        <ol className="logs" aria-live="off">
          {shown.map((l, i) => (
            <li key={`${l.time}-${i}`} className={`log log-${RANK[l.level]! >= 50 ? 'error' : RANK[l.level]! >= 40 ? 'warn' : 'info'}`}>
              <time dateTime={new Date(l.time).toISOString()}>{new Date(l.time).toLocaleTimeString()}</time> <span>{l.msg}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
