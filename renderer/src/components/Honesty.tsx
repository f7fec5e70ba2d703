import { useTranslation } from 'react-i18next';
import { formatAgo } from '../format.js';
import type { NodeDto } from '../store/types.js';
import { useActions, useApp, useNow } from './context.js';
import { detach } from '../detach.js';

type Tampering = 'dns-tampering' | 'http-tampering' | 'tls-interception';

/** The node was found to tamper (its verdict), or null. */
export function tamperingOf(n: NodeDto): Tampering | null {
  const v = n.honesty?.verdict;
  return v === 'dns-tampering' || v === 'http-tampering' || v === 'tls-interception' ? v : null;
}

/**
 * What the honesty checks say of a node, on its row: "✓ checked", "⚠ tampers (DNS)" with why and
 * the evidence as its title, "checking…"; nothing for a node not checked yet (most of a fresh pool).
 */
export function HonestyMark({ node: n }: { node: NodeDto }) {
  const { t } = useTranslation();
  const now = useNow();
  const checking = useApp((s) => s.checking[n.id] === true) || n.honesty?.checking === true;
  const h = n.honesty;
  if (!h) return null;
  if (checking)
    return (
      <span className="honesty checking" data-testid={`honesty-${n.id}`} aria-busy="true">
        {' '}
        · {t('honesty.checking')}
      </span>
    );
  const bad = tamperingOf(n);
  if (bad) {
    const evidence = h.evidence.map((e) => t('honesty.evidence', { ...e })).join('\n');
    return (
      <span
        className="honesty tampers"
        data-testid={`honesty-${n.id}`}
        title={`${t(`honesty.why.${bad}`)}\n${evidence}`}
      >
        {' '}
        · ⚠ {t(`honesty.verdict.${bad}`)}
        {h.accepted ? <span className="muted"> ({t('honesty.accepted')})</span> : null}
        {h.cleanChecks > 0 ? (
          <span className="muted" data-testid={`clean-since-${n.id}`}>
            {' '}
            ({t('honesty.cleanSince', { n: h.cleanChecks, of: h.cleanChecksToClear })})
          </span>
        ) : null}
      </span>
    );
  }
  if (h.verdict === 'honest' && h.checkedAt)
    return (
      <span
        className="honesty honest"
        data-testid={`honesty-${n.id}`}
        title={t('honesty.honestWhy', { ago: formatAgo(h.checkedAt, now(), t) })}
      >
        {' '}
        · ✓ {t('honesty.honest')}
      </span>
    );
  // Checked, but nothing could be concluded: said quietly, with why.
  if (h.checkedAt)
    return (
      <span
        className="honesty unchecked muted"
        data-testid={`honesty-${n.id}`}
        title={`${t('honesty.uncheckedWhy')}\n${h.inconclusive.join('\n')}`}
      >
        {' '}
        · {t('honesty.unchecked')}
      </span>
    );
  return null;
}

/** "Check": the node's honesty check now (through its tunnel, or one opened for it). */
export function CheckButton({ node: n }: { node: NodeDto }) {
  const { t } = useTranslation();
  const actions = useActions();
  const busy = useApp((s) => s.checking[n.id] === true);
  if (!n.honesty) return null;
  return (
    <button
      type="button"
      className="secondary"
      aria-label={t('honesty.checkFor', { host: n.host })}
      disabled={busy}
      aria-busy={busy}
      onClick={() => detach(actions.checkNode(n.id))}
    >
      {t('honesty.check')}
    </button>
  );
}

/**
 * Before a pick of a node found to tamper: what was found, and the choice. Gatehop never goes
 * there by itself; the user may, knowingly (the core then keeps the pick).
 */
export function ConfirmFlaggedPick({ node: n, onClose }: { node: NodeDto; onClose: () => void }) {
  const { t } = useTranslation();
  const actions = useActions();
  const bad = tamperingOf(n);
  if (!bad) return null;
  const titleId = `confirm-${n.id}-title`;
  return (
    <div role="alertdialog" aria-labelledby={titleId} className="confirm-flagged" data-testid={`confirm-${n.id}`}>
      <p id={titleId}>
        <strong>{t('honesty.confirmTitle', { host: n.host })}</strong>
      </p>
      <p>{t('honesty.confirmBody', { why: t(`honesty.why.${bad}`) })}</p>
      <button
        type="button"
        onClick={() => {
          onClose();
          detach(actions.switchTo(n.id, true));
        }}
      >
        {t('honesty.useAnyway')}
      </button>{' '}
      <button type="button" className="secondary" autoFocus onClick={onClose}>
        {t('honesty.cancel')}
      </button>
    </div>
  );
}
