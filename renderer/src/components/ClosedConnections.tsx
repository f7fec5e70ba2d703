import { useCallback, useDeferredValue, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ClosedConnections as ClosedList } from '../../../core/api/contract.js';
import { formatBytes, formatCountdown } from '../format.js';
import { nodeIndex } from '../store/nodes-slice.js';
import { useActions, useApp } from './context.js';
import { useWindowedRows } from './use-windowed-rows.js';
import { usePoll } from './use-poll.js';

/** How often the list is read again while shown. */
const REFRESH_MS = 3_000;
/** Rows asked for at once (the core holds up to its closedMax). */
const LIMIT = 1_000;

/**
 * The connections that ended (#64): host, rule, node, program, bytes, how long and how it ended,
 * newest first, searched by the core (every word, in any of those). Kept across restarts only when
 * the user turned that on in the Traffic view.
 */
export function ClosedConnections() {
  const { t, i18n } = useTranslation();
  const actions = useActions();
  const nodes = useApp((s) => nodeIndex(s.nodes));
  const [text, setText] = useState('');
  const q = useDeferredValue(text).trim();
  const [list, setList] = useState<ClosedList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    const r = await actions.closedConnections(q, LIMIT);
    if (r.ok) {
      setList(r.value);
      setError(null);
    } else setError(r.error.message);
  }, [actions, q]);
  usePoll(reload, REFRESH_MS);
  const rows = list?.connections ?? [];
  const w = useWindowedRows(rows.length);
  const time = (ms: number) => new Date(ms).toLocaleTimeString(i18n.language);
  return (
    <section aria-labelledby="closed-h" className="closed" data-testid="closed-connections">
      <div className="view-head">
        <h2 id="closed-h">{t('connections.closedTitle')}</h2>
        <label>
          {t('connections.search')}{' '}
          <input
            type="search"
            value={text}
            placeholder={t('connections.closedPlaceholder')}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
      </div>
      {list ? (
        <p className="muted">
          {t(list.kept ? 'connections.closedKept' : 'connections.closedMemory', { count: list.max })}
        </p>
      ) : null}
      {error && !list ? (
        <p role="alert">{t('connections.closedError', { message: error })}</p>
      ) : !list ? (
        <p className="muted" aria-busy="true">
          {t('connections.loading')}
        </p>
      ) : rows.length === 0 ? (
        <p className="muted">{q ? t('connections.noMatch') : t('connections.closedEmpty')}</p>
      ) : (
        <div className="table-wrap windowed" ref={w.ref} onScroll={w.onScroll}>
          <table aria-rowcount={rows.length + 1}>
            <thead>
              <tr>
                <th scope="col">{t('connections.ended')}</th>
                <th scope="col">{t('connections.target')}</th>
                <th scope="col">{t('connections.route')}</th>
                <th scope="col">{t('connections.node')}</th>
                <th scope="col">{t('connections.program')}</th>
                <th scope="col" className="num">
                  {t('connections.up')}
                </th>
                <th scope="col" className="num">
                  {t('connections.down')}
                </th>
                <th scope="col" className="num">
                  {t('connections.duration')}
                </th>
                <th scope="col">{t('connections.howEnded')}</th>
              </tr>
            </thead>
            <tbody>
              {w.padTop > 0 ? <tr aria-hidden="true" className="pad" style={{ height: w.padTop }} /> : null}
              {rows.slice(w.start, w.end).map((c, i) => (
                <tr key={`${c.id}-${c.endedAt}`} aria-rowindex={w.start + i + 2} ref={i === 0 ? w.measure : undefined}>
                  <td className="num">{time(c.endedAt)}</td>
                  <td className="host" dir="ltr">
                    {c.host}:{c.port}
                    {c.user ? <span className="muted"> · {c.user}</span> : null}
                  </td>
                  <td>
                    {c.route ? t(`connections.routeTo.${c.route}`) : '–'}
                    {c.rule ? (
                      <span className="muted">
                        {' · '}
                        <bdi dir="ltr">
                          {c.rule}
                          {c.rulePayload ? `,${c.rulePayload}` : ''}
                        </bdi>
                      </span>
                    ) : null}
                  </td>
                  <td>{c.nodeId ? (nodes.get(c.nodeId)?.host ?? c.nodeId) : '–'}</td>
                  <td>{c.program ?? '–'}</td>
                  <td className="num">{formatBytes(c.bytesUp)}</td>
                  <td className="num">{formatBytes(c.bytesDown)}</td>
                  <td className="num">{formatCountdown(c.endedAt - c.startedAt)}</td>
                  <td data-testid={`end-${c.id}`}>
                    {t(`connections.endedHow.${c.end}`)}
                    {c.errCode && c.end === 'error' ? <span className="muted"> · {c.errCode}</span> : null}
                  </td>
                </tr>
              ))}
              {w.padBottom > 0 ? <tr aria-hidden="true" className="pad" style={{ height: w.padBottom }} /> : null}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
