import { useDeferredValue, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../components/context.js';
import { useWindowedRows } from '../components/use-windowed-rows.js';
import { formatTime } from '../format.js';
import type { LogEntry } from '../store/state.js';

const RANK: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  '10': 10,
  '20': 20,
  '30': 30,
  '40': 40,
  '50': 50,
  '60': 60,
};
const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** Newest first, at or above `level`, containing `text` (case-insensitive). Pure. */
export function filterLogs(logs: readonly LogEntry[], level: (typeof LEVELS)[number], text: string): LogEntry[] {
  const needle = text.trim().toLowerCase();
  const min = RANK[level]!;
  const out: LogEntry[] = [];
  for (let i = logs.length - 1; i >= 0; i--) {
    const l = logs[i]!;
    if ((RANK[l.level] ?? 30) >= min && (!needle || l.msg.toLowerCase().includes(needle))) out.push(l);
  }
  return out;
}

export function Logs() {
  const { t, i18n } = useTranslation();
  const live = useApp((s) => s.logs);
  const level = useApp((s) => s.logLevel);
  const setLevel = useApp((s) => s.setLogLevel);
  const [text, setText] = useState('');
  // Paused: the lines as they were; new ones are counted, not shown, until Resume.
  const [frozen, setFrozen] = useState<LogEntry[] | null>(null);
  const logs = frozen ?? live;
  const newer = frozen ? live.filter((l) => l.seq > (frozen.at(-1)?.seq ?? -1)).length : 0;
  const deferred = useDeferredValue(text);
  const shown = useMemo(() => filterLogs(logs, level, deferred), [logs, level, deferred]);
  const w = useWindowedRows(shown.length, { rowHeight: 22 });
  return (
    <section aria-labelledby="logs-h" className="view">
      <div className="view-head">
        <h2 id="logs-h">{t('logs.title')}</h2>
        <span className="head-actions">
          <label>
            {t('logs.search')}{' '}
            <input
              type="search"
              value={text}
              placeholder={t('logs.searchPlaceholder')}
              onChange={(e) => setText(e.target.value)}
            />
          </label>
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
          <button type="button" aria-pressed={frozen !== null} onClick={() => setFrozen(frozen ? null : live)}>
            {frozen ? t('logs.resume', { count: newer }) : t('logs.pause')}
          </button>
        </span>
      </div>
      {shown.length === 0 ? (
        <p className="muted">{text ? t('logs.noMatch') : t('logs.empty')}</p>
      ) : (
        <div className="logs windowed" ref={w.ref} onScroll={w.onScroll} aria-label={t('logs.title')}>
          <ol aria-live="off" style={{ paddingTop: w.padTop, paddingBottom: w.padBottom }}>
            {shown.slice(w.start, w.end).map((l, i) => (
              <li
                key={l.seq}
                ref={i === 0 ? w.measure : undefined}
                className={`log log-${RANK[l.level]! >= 50 ? 'error' : RANK[l.level]! >= 40 ? 'warn' : 'info'}`}
                title={l.msg}
              >
                <time dateTime={new Date(l.time).toISOString()}>{formatTime(l.time, i18n.language)}</time>{' '}
                <span>{l.msg}</span>
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}
