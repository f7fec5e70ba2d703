import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatAgo, protocolLabel } from '../format.js';
import { detach } from '../detach.js';
import { useActions, useApp, useNow } from './context.js';

/**
 * What this network taught (#44): the protocol that does not get through here, the one Gatehop
 * uses first instead, until when no packet of the blocked one is sent here, and a way to forget it
 * (a network that changed, a filter lifted).
 */
export function NetworkLesson() {
  const { t, i18n } = useTranslation();
  const now = useNow();
  const actions = useActions();
  const protocols = useApp((s) => s.status?.protocols ?? null);
  const [forgotten, setForgotten] = useState(false);
  if (!protocols) return null;
  const lesson = protocols.lesson ?? null;
  return (
    <section className="field network-lesson" aria-labelledby="network-lesson-h" data-testid="network-lesson">
      <h3 id="network-lesson-h">{t('settings.networkTitle')}</h3>
      {lesson && protocols.preferred ? (
        <>
          <p>
            {t('settings.networkLesson', {
              blocked: protocolLabel(protocols.blocked ?? protocols.order[0]),
              preferred: protocolLabel(protocols.preferred),
              until: new Date(lesson.expiresAt).toLocaleDateString(i18n.language),
              ago: formatAgo(lesson.at, now(), t),
              path: lesson.path === 'upstream' ? t('settings.networkViaProxy') : '',
            })}
          </p>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              detach(
                actions.forgetNetwork().then((r) => {
                  if (r.ok) setForgotten(true);
                }),
              )
            }
          >
            {t('settings.networkForget')}
          </button>
        </>
      ) : (
        <p className="muted" role={forgotten ? 'status' : undefined}>
          {forgotten ? t('settings.networkForgotten') : t('settings.networkNothing')}
        </p>
      )}
    </section>
  );
}
