import { useTranslation } from 'react-i18next';
import { useApp, useNow } from './context.js';
import { useTicker } from './use-ticker.js';

interface Line {
  /** Stable: a banner keeps its element (and is announced once) while its countdown runs. */
  id: string;
  kind: 'error' | 'warn' | 'info';
  /** What screen readers are told, once. */
  text: string;
  /** A countdown shown beside it, not announced each second. */
  countdown?: string;
  dismiss?: () => void;
}

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
  const storeIncident = useApp((s) => s.status?.store?.incident ?? null);
  const dismissedStoreAt = useApp((s) => s.dismissedStoreIncidentAt);
  const dismissStoreIncident = useApp((s) => s.dismissStoreIncident);
  const setSysproxyNotice = useApp((s) => s.setSysproxyNotice);
  const now = useTicker(1000, useNow());
  const seconds = (at: number | null | undefined): number => (at ? Math.max(0, Math.ceil((at - now) / 1000)) : 0);

  const lines: Line[] = [];
  if (connection.state === 'down')
    lines.push({
      id: 'core-down',
      kind: 'error',
      text: t('banner.unreachable'),
      countdown: t('banner.retryIn', { seconds: seconds(connection.retryAt) }),
    });
  else if (connection.state === 'unauthorized')
    lines.push({ id: 'core-unauthorized', kind: 'error', text: t('banner.unauthorized') });
  else if (connection.state === 'connecting')
    lines.push({ id: 'core-connecting', kind: 'info', text: t('banner.connecting') });
  if (connection.state === 'open') {
    if (network?.state === 'waiting') {
      const key =
        network.reason === 'no-node-list'
          ? 'banner.waitingNoList'
          : network.reason === 'no-reachable-node'
            ? 'banner.waitingNoNode'
            : 'banner.waitingNoTunnel';
      lines.push({
        id: `network-${network.reason ?? 'waiting'}`,
        kind: 'warn',
        text: t(key),
        countdown: t('banner.retryAttemptIn', {
          seconds: seconds(network.nextAttemptAt),
          attempts: network.attempts + 1,
        }),
      });
    } else if (switching)
      lines.push({
        id: 'switching',
        kind: 'info',
        text: t('banner.switching', { state: t(`switchState.${switching}`) }),
      });
    else if (noActive) lines.push({ id: 'starting', kind: 'info', text: t('banner.starting') });
    if (refresh && refresh.phase !== 'done')
      lines.push({
        id: 'refresh',
        kind: refresh.phase === 'failed' ? 'warn' : 'info',
        text:
          t('banner.refreshing', { phase: t(`phase.${refresh.phase}`) }) +
          (refresh.message ? ` (${refresh.message})` : ''),
      });
  }
  if (sysproxyNotice)
    lines.push({
      id: 'sysproxy',
      kind: 'warn',
      text: t(`banner.sysproxy.${sysproxyNotice.type}`),
      dismiss: () => setSysproxyNotice(null),
    });
  if (storeIncident && storeIncident.at !== dismissedStoreAt)
    lines.push({
      id: `store-${storeIncident.at}`,
      kind: 'warn',
      text: t(`banner.store.${storeIncident.health}`, { file: storeIncident.movedTo ?? '' }),
      dismiss: () => dismissStoreIncident(storeIncident.at),
    });
  if (actionError)
    lines.push({
      id: 'action',
      kind: 'error',
      text: t('banner.actionFailed', { message: actionError.message }),
      dismiss: () => setActionError(null),
    });
  if (lines.length === 0) return null;
  return (
    <div className="banners">
      {lines.map((l) => (
        <div key={l.id} role={l.kind === 'error' ? 'alert' : 'status'} className={`banner banner-${l.kind}`}>
          <span>
            {l.text}
            {l.countdown ? <span aria-hidden="true"> {l.countdown}</span> : null}
          </span>
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
