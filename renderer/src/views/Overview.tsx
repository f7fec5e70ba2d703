import { useTranslation } from 'react-i18next';
import { useShallow } from 'zustand/react/shallow';
import { useActions, useApp, useNow } from '../components/context.js';
import { NoListHelp } from '../components/ListSources.js';
import { ProxyAddress } from '../components/ProxyAddress.js';
import { Protection } from '../components/Protection.js';
import { RunProgram } from '../components/RunProgram.js';
import { TrafficChart } from '../components/TrafficChart.js';
import { WhereAmI } from '../components/WhereAmI.js';
import { LeakTest } from '../components/LeakTest.js';
import { nodeIndex } from '../store/nodes-slice.js';
import { useTicker } from '../components/use-ticker.js';
import {
  countryName,
  flagOf,
  formatAgo,
  formatBytes,
  formatCountdown,
  formatMs,
  formatNumber,
  formatClock,
  formatRate,
  protocolLabel,
} from '../format.js';
import { detach } from '../detach.js';
import { failingShapeOf, recentMoveOf } from '../../../core/api/schemas.js';

const NO_DRAINING: never[] = [];
const NO_MEMBERS: never[] = [];

export function Overview() {
  const { t, i18n } = useTranslation();
  const status = useApp((s) => s.status);
  const statusState = useApp((s) => s.statusState);
  const statusError = useApp((s) => s.statusError);
  const throughput = useApp((s) => s.throughput);
  const activeNode = useApp((s) =>
    s.status?.active?.nodeId ? nodeIndex(s.nodes).get(s.status.active.nodeId) : undefined,
  );
  const standbyHost = useApp((s) =>
    s.status?.standby[0]?.nodeId ? nodeIndex(s.nodes).get(s.status.standby[0].nodeId)?.host : undefined,
  );
  const now = useTicker(1000, useNow());
  if (statusState === 'loading')
    return (
      <p className="muted" aria-busy="true">
        {t('banner.connecting')}
      </p>
    );
  if (!status) return <p role="alert">{statusError}</p>;
  const a = status.active;
  // How the active node fails, while it does (#60): the tray's tooltip says the same.
  const failing = failingShapeOf(status.health);
  // And for a while after it left one: when, where to, and why.
  const moved = failing ? null : recentMoveOf(status.switches, now);
  const standby = status.standby[0];
  const noList = status.egress === 'vpngate' && status.list !== null && status.list.nodes === 0;
  return (
    <section aria-labelledby="overview-h" className="view">
      <h2 id="overview-h">{t('nav.overview')}</h2>
      {noList ? <NoListHelp /> : null}
      {status.pinFailed ? (
        <p role="status" className="banner banner-warn">
          {t('overview.pinFailed', { node: status.pinFailed })}
        </p>
      ) : null}
      {a && failing ? (
        <p role="status" className="banner banner-warn" data-testid="node-failing">
          {t(`shell.tooltip.failing.${failing}`, { node: activeNode?.host ?? a.nodeId ?? '' })}
        </p>
      ) : null}
      {moved ? (
        <p role="status" className="banner banner-info" data-testid="node-moved">
          {t(`shell.tooltip.moved.${moved.leftFor}`, {
            from: moved.from,
            to: moved.to,
            time: formatClock(moved.at, i18n.language),
          })}
        </p>
      ) : null}
      {status.protocols?.preferred && status.protocols.order[0] !== status.protocols.preferred ? (
        <p role="status" className="banner banner-info" data-testid="protocol-learned">
          {t('overview.protocolLearned', {
            protocol: protocolLabel(status.protocols.preferred),
            blocked: protocolLabel(status.protocols.blocked ?? status.protocols.order[0]),
          })}
        </p>
      ) : null}
      <ActiveFlagged />
      {status.reach?.nodePath === 'upstream' ? (
        <p role="status" className="banner banner-info" data-testid="node-path-upstream">
          {t('overview.nodePathUpstream', { proxy: status.reach.upstream ?? '–' })}
        </p>
      ) : null}
      <div className="cards">
        <article className="card wide" aria-label={t('overview.active')}>
          <h3>{t('overview.active')}</h3>
          {status.egress === 'direct' ? (
            <p className="big">{t('overview.direct')}</p>
          ) : a ? (
            <>
              <p className="big" data-testid="active-node">
                <span aria-hidden="true">{flagOf(activeNode?.countryCode)} </span>
                {countryName(activeNode?.countryCode, a.country ?? '')} · {activeNode?.host ?? a.nodeId}
              </p>
              <dl className="facts">
                <dt>{t('overview.exit')}</dt>
                <dd>{a.ip ?? '–'}</dd>
                <dt>{t('overview.protocol')}</dt>
                <dd data-testid="active-protocol">{protocolLabel(a.protocol, a.proto)}</dd>
                <dt>{t('overview.rtt')}</dt>
                <dd>{formatMs(a.rttMs, t)}</dd>
                <dt>{t('overview.since')}</dt>
                <dd>{formatAgo(a.since, now, t)}</dd>
                {a.honesty ? (
                  <>
                    <dt>{t('honesty.label')}</dt>
                    <dd data-testid="active-honesty">
                      {a.honesty === 'honest'
                        ? `✓ ${t('honesty.honest')}`
                        : a.honesty === 'unchecked'
                          ? t('honesty.unchecked')
                          : `⚠ ${t(`honesty.verdict.${a.honesty}`)}`}
                    </dd>
                  </>
                ) : null}
              </dl>
            </>
          ) : (
            <p className="muted">{t('overview.none')}</p>
          )}
        </article>
        <article className="card">
          <h3>{t('overview.mode')}</h3>
          <p className="big">
            {status.mode === 'auto' ? t('overview.modeAuto') : t('overview.modeManual', { node: status.pinned ?? '–' })}
          </p>
        </article>
        <article className="card">
          <h3>{t('overview.sessions')}</h3>
          <p className="big">{formatNumber(status.sessions.active)}</p>
        </article>
        <article className="card">
          <h3>{t('overview.throughput')}</h3>
          <p className="big">
            ↑ {formatRate(throughput?.up)} · ↓ {formatRate(throughput?.down)}
          </p>
        </article>
        <article className="card">
          <h3>{t('overview.standby')}</h3>
          <p className="big">{standby ? (standbyHost ?? standby.nodeId) : t('overview.noStandby')}</p>
        </article>
        {status.egress === 'vpngate' ? <WhereAmI /> : null}
        <LeakTest hasNode={!!status.active?.nodeId} />
        {status.honesty ? (
          <article className="card" data-testid="honesty-summary">
            <h3>{t('honesty.label')}</h3>
            <p>
              {status.honesty.enabled
                ? t('honesty.overview', {
                    honest: formatNumber(status.honesty.honest),
                    flagged: formatNumber(status.honesty.flagged),
                  })
                : t('honesty.off')}
            </p>
          </article>
        ) : null}
        <ProxyAddress />
        <Protection />
        <RunProgram />
        <TrafficChart />
      </div>
      <Members />
      <Draining now={now} />
    </section>
  );
}

/** The node in use was found to tamper: said at the top (it is left at once, unless the user chose it knowingly). */
function ActiveFlagged() {
  const { t } = useTranslation();
  const verdict = useApp((s) => s.status?.active?.honesty);
  const host = useApp((s) =>
    s.status?.active?.nodeId ? (nodeIndex(s.nodes).get(s.status.active.nodeId)?.host ?? s.status.active.nodeId) : null,
  );
  if (!verdict || verdict === 'honest' || verdict === 'unchecked' || !host) return null;
  return (
    <p role="alert" className="banner banner-error" data-testid="active-flagged">
      {t('honesty.activeFlagged', { host, verdict: t(`honesty.verdict.${verdict}`) })}
    </p>
  );
}

/** With several tunnels at once (groups.balance): each one, its sessions, traffic and RTT; one avoided is marked. */
function Members() {
  const { t } = useTranslation();
  const members = useApp((s) => s.status?.members ?? NO_MEMBERS);
  const balance = useApp((s) => s.status?.balance);
  const hosts = useApp(useShallow((s) => members.map((m) => nodeIndex(s.nodes).get(m.nodeId ?? '')?.host)));
  if (members.length < 2 || !balance) return null;
  return (
    <section role="region" aria-label={t('members.title')} className="draining">
      <h3>
        {t('members.title')}{' '}
        <span className="muted">
          ({t('members.summary', { count: members.length, strategy: t(`members.strategy.${balance.strategy}`) })})
        </span>
      </h3>
      <ul className="drain-list">
        {members.map((m, i) => (
          <li key={m.egressId} className="drain-item" data-down={m.down || undefined}>
            <span className="drain-host">
              {hosts[i] ?? m.nodeId ?? m.egressId}
              <span className="muted"> · {protocolLabel(m.protocol)}</span>
              {m.primary ? <span className="muted"> · {t('members.primary')}</span> : null}
            </span>
            <span>{t('members.sessions', { count: m.sessions })}</span>
            <span>↓ {formatBytes(m.bytesDown)}</span>
            <span>{m.down ? <span role="status">{t('members.down')}</span> : formatMs(m.rttMs, t)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Every draining tunnel, its sessions, its grace countdown, and a Close now button. */
function Draining({ now }: { now: number }) {
  const { t } = useTranslation();
  const draining = useApp((s) => s.status?.draining ?? NO_DRAINING);
  const hosts = useApp(useShallow((s) => draining.map((d) => nodeIndex(s.nodes).get(d.nodeId ?? '')?.host)));
  const actions = useActions();
  return (
    <section role="region" aria-label={t('draining.title')} className="draining">
      <h3>{t('draining.title')}</h3>
      {draining.length === 0 ? (
        <p className="muted">{t('draining.empty')}</p>
      ) : (
        <ul className="drain-list">
          {draining.map((d, i) => {
            const host = hosts[i] ?? d.nodeId ?? d.egressId;
            return (
              <li key={d.egressId} className="drain-item">
                <span className="drain-host">
                  {host}
                  {d.protocol ? <span className="muted"> · {protocolLabel(d.protocol)}</span> : null}
                </span>
                <span>{t('draining.sessions', { count: d.sessions })}</span>
                <span aria-label={t('draining.left', { time: formatCountdown(d.graceEndsAt - now) })}>
                  {formatCountdown(d.graceEndsAt - now)}
                </span>
                <button
                  type="button"
                  aria-label={t('draining.closeNowFor', { host })}
                  onClick={() => detach(actions.closeDraining(d.egressId))}
                >
                  {t('draining.closeNow')}
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
