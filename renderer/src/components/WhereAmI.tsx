import { useTranslation } from 'react-i18next';
import { countryName, flagOf, formatAgo } from '../format.js';
import { useActions, useApp, useNow } from './context.js';
import { useTicker } from './use-ticker.js';
import { nodeIndex } from '../store/nodes-slice.js';
import { detach } from '../detach.js';

/**
 * Where am I: the exit address and country measured through the active tunnel (exitCheck.url),
 * beside what the list says of the node; a relay node, whose exit is elsewhere, is flagged.
 */
export function WhereAmI() {
  const { t } = useTranslation();
  const measured = useApp((s) => s.exit);
  const active = useApp((s) => s.status?.active ?? null);
  // A measurement of the node before a switch says nothing of this one: "checking…" until it is redone.
  const exit =
    measured &&
    (!active ||
      measured.nodeId === null ||
      measured.nodeId === active.nodeId ||
      measured.error === 'exitCheck.url is not set')
      ? measured
      : null;
  const node = useApp((s) => (s.status?.active?.nodeId ? nodeIndex(s.nodes).get(s.status.active.nodeId) : undefined));
  const actions = useActions();
  const now = useTicker(5000, useNow());
  const off = exit?.error === 'exitCheck.url is not set' || (!exit && !active);
  const listedCode = node?.countryCode ?? null;
  const mismatch = !!(
    exit?.address &&
    exit.country &&
    listedCode &&
    exit.country.toUpperCase() !== listedCode.toUpperCase()
  );
  return (
    <article className="card wide" aria-labelledby="where-h">
      <h3 id="where-h">{t('overview.whereAmI')}</h3>
      {off ? (
        <p className="muted">{t('overview.exitOff')}</p>
      ) : (
        <>
          <dl className="facts">
            <dt>{t('overview.exitMeasured')}</dt>
            <dd data-testid="exit-address">
              {exit?.address ? (
                <>
                  {exit.address}
                  {exit.country ? (
                    <>
                      {' · '}
                      <span aria-hidden="true">{flagOf(exit.country)} </span>
                      {countryName(exit.country, exit.country)}
                    </>
                  ) : null}
                  <span className="muted"> · {formatAgo(exit.at, now, t)}</span>
                </>
              ) : exit?.error ? (
                <span className="field-error">{t('overview.exitFailed', { error: exit.error })}</span>
              ) : (
                <span className="muted">{t('overview.exitChecking')}</span>
              )}
            </dd>
            <dt>{t('overview.exitListed')}</dt>
            <dd>
              {active?.ip ?? '–'}
              {node ? ` · ${countryName(node.countryCode, node.country)}` : ''}
            </dd>
          </dl>
          {mismatch ? (
            <p role="status" className="banner banner-warn" data-testid="exit-mismatch">
              {t('overview.exitMismatch', {
                country: countryName(exit.country, exit.country!),
                listed: countryName(listedCode, node!.country),
              })}
            </p>
          ) : null}
          <button type="button" onClick={() => detach(actions.checkExit())}>
            {t('overview.exitCheckNow')}
          </button>
        </>
      )}
    </article>
  );
}
