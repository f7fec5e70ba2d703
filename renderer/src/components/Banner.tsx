import { useTranslation } from 'react-i18next';
import { useApp, useNow } from './context.js';
import { useTicker } from './use-ticker.js';

/** The one line that says what is wrong or happening: core unreachable, waiting for network, switching, refreshing. */
export function Banner() {
  const { t } = useTranslation();
  const connection = useApp((s) => s.connection);
  const network = useApp((s) => s.status?.network ?? null);
  const switching = useApp((s) => (s.status && s.status.switches.inProgress !== null ? s.status.switches.state : null));
  const noActive = useApp((s) => s.status !== null && s.status.egress === 'vpngate' && s.status.active === null);
  const refresh = useApp((s) => s.refresh);
  const actionError = useApp((s) => s.actionError);
  const setActionError = useApp((s) => s.setActionError);
  const sysproxyNotice = useApp((s) => s.sysproxyNotice);
  const setSysproxyNotice = useApp((s) => s.setSysproxyNotice);
  const now = useTicker(1000, useNow());

  const lines: Array<{ kind: 'error' | 'warn' | 'info'; text: string; dismiss?: () => void }> = [];
  if (connection.state === 'down') lines.push({ kind: 'error', text: t('banner.unreachable', { seconds: Math.max(0, Math.ceil((connection.retryAt - now) / 1000)) }) });
  else if (connection.state === 'unauthorized') lines.push({ kind: 'error', text: t('banner.unauthorized') });
  else if (connection.state === 'connecting') lines.push({ kind: 'info', text: t('banner.connecting') });
  if (connection.state === 'open') {
    if (network?.state === 'waiting') {
      const seconds = network.nextAttemptAt ? Math.max(0, Math.ceil((network.nextAttemptAt - now) / 1000)) : 0;
      const key = network.reason === 'no-node-list' ? 'banner.waitingNoList' : network.reason === 'no-reachable-node' ? 'banner.waitingNoNode' : 'banner.waitingNoTunnel';
      lines.push({ kind: 'warn', text: t(key, { seconds, attempts: network.attempts + 1 }) });
    } else if (switching) lines.push({ kind: 'info', text: t('banner.switching', { state: switching }) });
    else if (noActive) lines.push({ kind: 'info', text: t('banner.starting') });
    if (refresh && refresh.phase !== 'done') lines.push({ kind: refresh.phase === 'failed' ? 'warn' : 'info', text: t('banner.refreshing', { phase: t(`phase.${refresh.phase}`) }) + (refresh.message ? ` (${refresh.message})` : '') });
  }
  if (sysproxyNotice) lines.push({ kind: 'warn', text: t(`banner.sysproxy.${sysproxyNotice.type}`), dismiss: () => setSysproxyNotice(null) });
  if (actionError) lines.push({ kind: 'error', text: t('banner.actionFailed', { message: actionError.message }), dismiss: () => setActionError(null) });
  if (lines.length === 0) return null;
  return (
    <div className="banners">
      {lines.map((l) => (
        <div key={l.text} role={l.kind === 'error' ? 'alert' : 'status'} className={`banner banner-${l.kind}`}>
          <span>{l.text}</span>
          {l.dismiss ? (
            <button type="button" className="link" onClick={l.dismiss}>
              {t('banner.dismiss')}
            </button>
          ) : null}
        </div>
      ))}
    </div>
  );
}
