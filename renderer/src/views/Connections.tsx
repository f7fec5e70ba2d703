import { useCallback, useDeferredValue, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useActions, useApp, useNow } from '../components/context.js';
import { useTicker } from '../components/use-ticker.js';
import { useWindowedRows } from '../components/use-windowed-rows.js';
import { formatBytes, formatCountdown } from '../format.js';
import { nodeIndex } from '../store/nodes-slice.js';
import { detach } from '../detach.js';
import { ClosedConnections } from '../components/ClosedConnections.js';
import { usePoll } from '../components/use-poll.js';

/** Live sessions, re-read every 2 s while this view is open (there is no per-byte event). */
export function Connections() {
  const { t } = useTranslation();
  const list = useApp((s) => s.connections);
  const state = useApp((s) => s.connectionsState);
  const error = useApp((s) => s.connectionsError);
  const nodes = useApp((s) => nodeIndex(s.nodes));
  const actions = useActions();
  const now = useTicker(1000, useNow());
  const [text, setText] = useState('');
  const needle = useDeferredValue(text).trim().toLowerCase();
  const shown = useMemo(
    () =>
      needle
        ? list.filter((c) =>
            [c.client, c.target ?? '', nodes.get(c.nodeId ?? '')?.host ?? c.nodeId ?? ''].some((v) =>
              v.toLowerCase().includes(needle),
            ),
          )
        : list,
    [list, needle, nodes],
  );
  const w = useWindowedRows(shown.length);
  const load = useCallback(() => actions.loadConnections(), [actions]);
  usePoll(load, 2000);
  return (
    <section aria-labelledby="conn-h" className="view">
      <div className="view-head">
        <h2 id="conn-h">{t('connections.title')}</h2>
        <label>
          {t('connections.search')}{' '}
          <input
            type="search"
            value={text}
            placeholder={t('connections.searchPlaceholder')}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
      </div>
      {state === 'loading' ? (
        <p className="muted" aria-busy="true">
          {t('connections.loading')}
        </p>
      ) : state === 'error' ? (
        <p role="alert">{t('connections.error', { message: error })}</p>
      ) : shown.length === 0 ? (
        <p className="muted">{list.length === 0 ? t('connections.empty') : t('connections.noMatch')}</p>
      ) : (
        <div className="table-wrap windowed" ref={w.ref} onScroll={w.onScroll}>
          <table aria-rowcount={shown.length + 1}>
            <thead>
              <tr>
                <th scope="col">{t('connections.client')}</th>
                <th scope="col">{t('connections.target')}</th>
                <th scope="col">{t('connections.route')}</th>
                <th scope="col">{t('connections.node')}</th>
                <th scope="col" className="num">
                  {t('connections.up')}
                </th>
                <th scope="col" className="num">
                  {t('connections.down')}
                </th>
                <th scope="col" className="num">
                  {t('connections.age')}
                </th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {w.padTop > 0 ? <tr aria-hidden="true" className="pad" style={{ height: w.padTop }} /> : null}
              {shown.slice(w.start, w.end).map((c, i) => (
                <tr key={c.id} aria-rowindex={w.start + i + 2} ref={i === 0 ? w.measure : undefined}>
                  <td>{c.client}</td>
                  <td className="host">{c.target ?? '–'}</td>
                  <td data-testid={`route-${c.id}`}>
                    {c.route ? (
                      <span title={`${c.route.rule}${c.route.payload ? `,${c.route.payload}` : ''}`}>
                        {t(`connections.routeTo.${c.route.target}`)}
                        <span className="muted">
                          {' · '}
                          {/* The rule is Latin text in any language: isolated, so a right-to-left row keeps its order. */}
                          <bdi dir="ltr">
                            {c.route.rule}
                            {c.route.payload ? `,${c.route.payload}` : ''}
                          </bdi>
                        </span>
                      </span>
                    ) : (
                      '–'
                    )}
                  </td>
                  <td>{nodes.get(c.nodeId ?? '')?.host ?? c.nodeId ?? c.egressId ?? '–'}</td>
                  <td className="num">{formatBytes(c.bytesUp)}</td>
                  <td className="num">{formatBytes(c.bytesDown)}</td>
                  <td className="num">{formatCountdown(now - c.startedAt)}</td>
                  <td>
                    <button
                      type="button"
                      aria-label={t('connections.closeFor', { target: c.target ?? c.id })}
                      onClick={() => detach(actions.closeConnection(c.id).then(() => actions.loadConnections()))}
                    >
                      {t('connections.close')}
                    </button>
                  </td>
                </tr>
              ))}
              {w.padBottom > 0 ? <tr aria-hidden="true" className="pad" style={{ height: w.padBottom }} /> : null}
            </tbody>
          </table>
        </div>
      )}
      <ClosedConnections />
    </section>
  );
}
