import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { detach } from '../detach.js';
import { leakFindings, type Finding } from '../leak-findings.js';
import { gatherWebRtc } from '../webrtc-check.js';
import { useActions } from './context.js';

/**
 * The leak self-test (#64): on the user's click, the core looks through the active node (the
 * address sites see, the resolver that answers, this computer's IPv6) and this page asks WebRTC
 * what it would show a site (a browser's WebRTC goes outside any proxy); each finding in plain words.
 */
export function LeakTest({ hasNode }: { hasNode: boolean }) {
  const { t } = useTranslation();
  const actions = useActions();
  const [running, setRunning] = useState(false);
  const [findings, setFindings] = useState<Finding[] | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [asked, setAsked] = useState<string | null>(null);

  const run = async (): Promise<void> => {
    setRunning(true);
    setFailed(null);
    try {
      const r = await actions.runLeakTest();
      if (!r.ok) {
        setFailed(r.error.message);
        return;
      }
      const hosts = [r.value.exit.url, r.value.resolver.url]
        .filter((u): u is string => !!u)
        .map((u) =>
          u
            .replace(/^https?:\/\//i, '')
            .split('/')[0]!
            .replace('{nonce}.', ''),
        );
      setAsked(
        t('leak.asks', {
          through: hosts.length ? hosts.join(t('settings.listSeparator')) : t('leak.nothing'),
          stun: r.value.stunUrl ?? t('leak.nothing'),
        }),
      );
      const w = await gatherWebRtc(r.value.stunUrl);
      setFindings(leakFindings(r.value, w, t));
    } finally {
      setRunning(false);
    }
  };

  return (
    <article className="card wide" aria-labelledby="leak-h" data-testid="leak-test">
      <h3 id="leak-h">{t('leak.title')}</h3>
      <p className="muted">{t('leak.help')}</p>
      {hasNode ? null : <p className="muted">{t('leak.noNode')}</p>}
      <button type="button" disabled={running} aria-busy={running} onClick={() => detach(run())}>
        {running ? t('leak.running') : t('leak.run')}
      </button>
      {failed ? (
        <p role="alert" className="field-error">
          {t('leak.failed', { error: failed })}
        </p>
      ) : null}
      {findings ? (
        <>
          <ul className="leak-findings" aria-live="polite">
            {findings.map((f) => (
              <li key={f.part} data-testid={`leak-${f.part}`} data-verdict={f.verdict} className={`leak-${f.verdict}`}>
                <strong>
                  {t(`leak.part.${f.part}`)} · {t(`leak.verdict.${f.verdict}`)}
                </strong>{' '}
                {f.text}
              </li>
            ))}
          </ul>
          {asked ? <p className="muted">{asked}</p> : null}
        </>
      ) : null}
    </article>
  );
}
