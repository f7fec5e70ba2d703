import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TrafficSummaryView } from '../../../core/api/contract.js';
import { useActions, useApp } from '../components/context.js';
import { nodeIndex } from '../store/nodes-slice.js';
import { TrafficDays } from '../components/TrafficDays.js';
import { useBusy } from '../components/use-busy.js';
import { detach } from '../detach.js';
import { countryName, formatBytes, formatNumber } from '../format.js';
import { usePoll } from '../components/use-poll.js';

/** How often the view reads the ledger again while it is shown (flows count as they end). */
const REFRESH_MS = 10_000;
const RANGES = [1, 7, 30, 90, 365] as const;
const RETENTIONS = [7, 30, 90, 365, 3650] as const;
type Breakdown = 'byNode' | 'byNetwork' | 'byRoute' | 'byRule' | 'byProgram' | 'byDevice';
const BREAKDOWNS: Breakdown[] = ['byNode', 'byNetwork', 'byRoute', 'byRule', 'byProgram', 'byDevice'];

/**
 * "Where did my bytes go" (#64): bytes per day (through nodes and direct), and by node, network,
 * route, rule, program and device, over a range the user picks; what is kept, where and for how
 * long, said beside it, with Export (CSV) and Erase. Everything is read from this computer's core.
 */
export function Traffic() {
  const { t } = useTranslation();
  const actions = useActions();
  const [days, setDays] = useState<number>(30);
  const [nodesOnly, setNodesOnly] = useState(false);
  const [summary, setSummary] = useState<TrafficSummaryView | null>(null);
  const [error, setError] = useState<string | null>(null);

  const reload = useCallback(async () => {
    const r = await actions.getTraffic(days, nodesOnly);
    if (r.ok) {
      setSummary(r.value);
      setError(null);
    } else setError(r.error.message);
  }, [actions, days, nodesOnly]);
  usePoll(reload, REFRESH_MS);
  const { busy, run } = useBusy(reload);

  const exportCsv = () =>
    run(async () => {
      const r = await actions.exportTraffic(summary?.options.retentionDays ?? days);
      if (!r.ok) return;
      const url = URL.createObjectURL(new Blob([r.value.csv], { type: 'text/csv' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = r.value.filename;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  const erase = () =>
    run(async () => {
      if (window.confirm(t('traffic.eraseConfirm'))) await actions.eraseTraffic();
    });

  return (
    <section aria-labelledby="traffic-view-h" className="view traffic" data-testid="traffic">
      <div className="view-head">
        <h2 id="traffic-view-h">{t('traffic.title')}</h2>
        <label>
          {t('traffic.range')}{' '}
          <select value={days} onChange={(e) => setDays(Number(e.target.value))} data-testid="traffic-range">
            {RANGES.map((d) => (
              <option key={d} value={d}>
                {d === 1 ? t('traffic.today') : t('traffic.lastDays', { count: d })}
              </option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={nodesOnly} onChange={(e) => setNodesOnly(e.target.checked)} />{' '}
          {t('traffic.nodesOnly')}
        </label>
      </div>
      {error && !summary ? (
        <p role="alert">{t('traffic.error', { message: error })}</p>
      ) : !summary ? (
        <p className="muted" aria-busy="true">
          {t('traffic.loading')}
        </p>
      ) : (
        <>
          <div className="cards">
            <article className="card wide" aria-labelledby="traffic-total-h">
              <h3 id="traffic-total-h">{nodesOnly ? t('traffic.totalNodes') : t('traffic.total')}</h3>
              {summary.total.flows === 0 ? (
                <p className="muted" data-testid="traffic-empty">
                  {t('traffic.empty')}
                </p>
              ) : (
                <p className="big" data-testid="traffic-total">
                  <span dir="ltr">
                    ↑ {formatBytes(summary.total.up)} · ↓ {formatBytes(summary.total.down)}
                  </span>{' '}
                  <span className="muted">{t('traffic.connections', { count: summary.total.flows })}</span>
                </p>
              )}
              <TrafficDays days={summary.days} />
            </article>
          </div>
          <div className="cards breakdowns">
            {BREAKDOWNS.map((b) => (
              <BreakdownCard key={b} which={b} parts={summary[b]} />
            ))}
          </div>
          <div className="cards">
            <article className="card wide" aria-labelledby="traffic-kept-h" data-testid="traffic-privacy">
              <h3 id="traffic-kept-h">{t('traffic.keptTitle')}</h3>
              <p>
                {summary.persistent
                  ? t('traffic.keptNote', { days: summary.options.retentionDays })
                  : t('traffic.memoryNote')}
              </p>
              <div className="row">
                <label>
                  {t('traffic.retention')}{' '}
                  <select
                    value={summary.options.retentionDays}
                    disabled={busy}
                    onChange={(e) =>
                      detach(run(() => actions.setTrafficOptions({ retentionDays: Number(e.target.value) })))
                    }
                  >
                    {[...new Set([...RETENTIONS, summary.options.retentionDays])]
                      .sort((a, b) => a - b)
                      .map((d) => (
                        <option key={d} value={d}>
                          {t('traffic.lastDays', { count: d })}
                        </option>
                      ))}
                  </select>
                </label>
                <label>
                  <input
                    type="checkbox"
                    checked={summary.options.keepClosed}
                    disabled={busy}
                    onChange={(e) => detach(run(() => actions.setTrafficOptions({ keepClosed: e.target.checked })))}
                  />{' '}
                  {t('traffic.keepClosed', { count: summary.options.closedMax })}
                </label>
              </div>
              <div className="row">
                <button type="button" disabled={busy} onClick={() => detach(exportCsv())}>
                  {t('traffic.export')}
                </button>
                <button type="button" className="danger" disabled={busy} onClick={() => detach(erase())}>
                  {t('traffic.erase')}
                </button>
              </div>
            </article>
          </div>
        </>
      )}
    </section>
  );
}

/** One breakdown (by node, network, …): each part's bytes both ways and its share of the largest. */
function BreakdownCard({ which, parts }: { which: Breakdown; parts: TrafficSummaryView['byNode'] }) {
  const { t } = useTranslation();
  const nodes = useApp((s) => nodeIndex(s.nodes));
  const most = Math.max(1, ...parts.map((p) => p.up + p.down));
  const name = (key: string, label: string): string => {
    if (key === '…') return t('traffic.others');
    // A node the pool still knows is named as the Nodes view names it; a forgotten one by its id.
    const n = which === 'byNode' && key ? nodes.get(key) : undefined;
    if (n) return `${countryName(n.countryCode, n.country)} · ${n.host}`;
    if (which === 'byRoute')
      return key ? t(`connections.routeTo.${key}`, { defaultValue: key }) : t('traffic.unrouted');
    if (key !== '') return label;
    return t(`traffic.none.${which}`);
  };
  return (
    <article className="card" aria-labelledby={`traffic-${which}-h`} data-testid={`traffic-${which}`}>
      <h3 id={`traffic-${which}-h`}>{t(`traffic.${which}`)}</h3>
      {parts.length === 0 ? (
        <p className="muted">{t('traffic.nothing')}</p>
      ) : (
        <table className="breakdown">
          <tbody>
            {parts.map((p) => (
              <tr key={p.key}>
                <td className="host" dir="auto">
                  {name(p.key, p.label)}
                  <div
                    className="share-bar"
                    style={{ width: `${((p.up + p.down) / most) * 100}%` }}
                    aria-hidden="true"
                  />
                </td>
                <td className="num">{formatBytes(p.up + p.down)}</td>
                <td className="num muted">{formatNumber(p.flows)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}
