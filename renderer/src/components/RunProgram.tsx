import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { detach } from '../detach.js';
import { formatNumber } from '../format.js';
import { useActions, useApp } from './context.js';

/**
 * "Run a program through Gatehop" (#46, Linux): for programs that ignore proxy settings, the core
 * starts one captured (a command or a .desktop file), or opens the user's terminal with everything
 * in it captured; the programs running so now are listed. Where capture cannot work, it says why.
 */
export function RunProgram() {
  const { t } = useTranslation();
  const actions = useActions();
  const capture = useApp((s) => s.status?.capture);
  const [command, setCommand] = useState('');
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  if (!capture) return null;
  const start = async (terminal: boolean): Promise<void> => {
    setBusy(true);
    setSaid(null);
    try {
      const r = await actions.runCaptured(command, terminal);
      if (!r.ok) return setSaid({ ok: false, text: t('run.failed', { why: r.error.message }) });
      setSaid({
        ok: true,
        text: terminal ? t('run.terminalOpened') : t('run.started', { command: r.value.command.join(' ') }),
      });
      if (!terminal) setCommand('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <article className="card wide" aria-labelledby="run-h" data-testid="run-program">
      <h3 id="run-h">{t('run.title')}</h3>
      <p className="muted" id="hint-run">
        {t('run.help')}
      </p>
      {capture.available ? (
        <form
          className="run-program"
          onSubmit={(e) => {
            e.preventDefault();
            detach(start(false));
          }}
        >
          <label htmlFor="run-command">{t('run.command')}</label>
          <input
            id="run-command"
            dir="ltr"
            type="text"
            spellCheck={false}
            autoComplete="off"
            value={command}
            placeholder={t('run.placeholder')}
            aria-describedby="hint-run"
            onChange={(e) => setCommand(e.target.value)}
          />
          <div className="row">
            <button type="submit" disabled={busy || command.trim() === ''}>
              {t('run.run')}
            </button>
            <button type="button" disabled={busy} onClick={() => detach(start(true))}>
              {t('run.terminal')}
            </button>
          </div>
        </form>
      ) : (
        <p data-testid="run-unavailable">{t(`run.unavailable.${capture.reason ?? 'socket'}`)}</p>
      )}
      {said ? (
        <p role="status" className={said.ok ? 'ok' : 'error'} data-testid="run-said">
          {said.text}
        </p>
      ) : null}
      {capture.programs.length > 0 ? (
        <>
          <p className="muted">{t('run.now')}</p>
          <ul className="marks" data-testid="run-programs">
            {capture.programs.map((p) => (
              <li key={p.id}>
                ✓ <span dir="ltr">{p.command}</span>{' '}
                {t('run.connections', {
                  count: p.connections,
                  connections: formatNumber(p.connections),
                  flows: formatNumber(p.udpFlows),
                })}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </article>
  );
}
