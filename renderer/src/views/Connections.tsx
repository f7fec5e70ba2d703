import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useShallow } from 'zustand/react/shallow';
import { useActions, useApp, useNow } from '../components/context.js';
import { useTicker } from '../components/use-ticker.js';
import { formatBytes, formatCountdown } from '../format.js';

/** Live sessions, re-read every 2 s while this view is open (there is no per-byte event). */
export function Connections() {
  const { t } = useTranslation();
  const list = useApp((s) => s.connections);
  const state = useApp((s) => s.connectionsState);
  const error = useApp((s) => s.connectionsError);
  const hosts = useApp(useShallow((s) => Object.fromEntries(s.nodes.map((n) => [n.id, n.host]))));
  const actions = useActions();
  const now = useTicker(1000, useNow());
  useEffect(() => {
    void actions.loadConnections();
    const id = setInterval(() => void actions.loadConnections(), 2000);
    return () => clearInterval(id);
  }, [actions]);
  return (
    <section aria-labelledby="conn-h" className="view">
      <h2 id="conn-h">{t('connections.title')}</h2>
      {state === 'loading' ? (
        <p className="muted">{t('connections.loading')}</p>
      ) : state === 'error' ? (
        <p role="alert">{t('connections.error', { message: error })}</p>
      ) : list.length === 0 ? (
        <p className="muted">{t('connections.empty')}</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t('connections.client')}</th>
                <th scope="col">{t('connections.target')}</th>
                <th scope="col">{t('connections.node')}</th>
                <th scope="col" className="num">{t('connections.up')}</th>
                <th scope="col" className="num">{t('connections.down')}</th>
                <th scope="col" className="num">{t('connections.age')}</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {list.map((c) => (
                <tr key={c.id}>
                  <td>{c.client}</td>
                  <td className="host">{c.target ?? '–'}</td>
                  <td>{hosts[c.nodeId ?? ''] ?? c.nodeId ?? c.egressId ?? '–'}</td>
                  <td className="num">{formatBytes(c.bytesUp)}</td>
                  <td className="num">{formatBytes(c.bytesDown)}</td>
                  <td className="num">{formatCountdown(now - c.startedAt)}</td>
                  <td>
                    <button type="button" aria-label={t('connections.closeFor', { target: c.target ?? c.id })} onClick={() => void actions.closeConnection(c.id).then(() => actions.loadConnections())}>
                      {t('connections.close')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
