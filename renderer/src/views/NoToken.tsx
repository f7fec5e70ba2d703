import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { login, loginAvailable } from '../client/login.js';
import { keepToken } from '../client/token.js';
import { detach } from '../detach.js';

/**
 * A page opened without the token: where the core has a dashboard password (a LAN address, #63),
 * a form for it; otherwise where to find the link with the token.
 */
export function NoToken() {
  const { t } = useTranslation();
  const [available, setAvailable] = useState<boolean | null>(null);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    detach(loginAvailable().then(setAvailable));
  }, []);
  const submit = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    const r = await login(password);
    setBusy(false);
    if (!r.ok) return setError(t(r.reason === 'wrong' ? 'noToken.wrong' : 'noToken.unreachable'));
    keepToken(window.sessionStorage, r.token);
    window.location.reload();
  };
  return (
    <main className="no-token">
      <h1>{t('noToken.title')}</h1>
      {available ? (
        <form
          className="login"
          onSubmit={(e) => {
            e.preventDefault();
            detach(submit());
          }}
        >
          <label htmlFor="login-password">{t('noToken.password')}</label>
          <input
            id="login-password"
            type="password"
            autoComplete="current-password"
            autoFocus
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          <button type="submit" disabled={busy || password === ''}>
            {t('noToken.signIn')}
          </button>
          {error ? (
            <p role="alert" className="error">
              {error}
            </p>
          ) : null}
          <p className="muted">{t('noToken.passwordHelp')}</p>
        </form>
      ) : (
        <p>{t('noToken.body')}</p>
      )}
    </main>
  );
}
