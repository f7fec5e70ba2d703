import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from './context.js';
import { detach } from '../detach.js';

/** "host:port" as a URL host: an IPv6 address in brackets. */
export function hostPort(address: string): string {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i);
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${address.slice(i + 1)}`;
}

/** The ways other programs use the proxy: SOCKS5 with remote names, HTTP, and a terminal's proxy variables. */
export function proxyForms(address: string): Array<{ id: 'socks' | 'http' | 'terminal'; value: string }> {
  const hp = hostPort(address);
  return [
    { id: 'socks', value: `socks5h://${hp}` },
    { id: 'http', value: `http://${hp}` },
    { id: 'terminal', value: `export https_proxy=http://${hp} http_proxy=http://${hp} all_proxy=socks5h://${hp}` },
  ];
}

/** The proxy's address with a Copy button for each form; says what it copied, once. */
export function ProxyAddress() {
  const { t } = useTranslation();
  const address = useApp((s) => s.status?.listen.proxy ?? null);
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  if (!address) return null;
  const copy = async (what: string, value: string): Promise<void> => {
    try {
      await navigator.clipboard.writeText(value);
      setSaid({ ok: true, text: t('overview.copied', { what }) });
    } catch {
      setSaid({ ok: false, text: t('overview.copyFailed') });
    }
  };
  return (
    <article className="card wide" aria-labelledby="proxy-h">
      <h3 id="proxy-h">{t('overview.useProxy')}</h3>
      <dl className="facts copy-list">
        {proxyForms(address).map((f) => (
          <div key={f.id} className="copy-row">
            <dt>{t(`overview.form.${f.id}`)}</dt>
            <dd>
              <code className="url" dir="ltr" data-testid={`proxy-${f.id}`}>
                {f.value}
              </code>{' '}
              <button
                type="button"
                aria-label={t('overview.copyWhat', { what: t(`overview.form.${f.id}`) })}
                onClick={() => detach(copy(t(`overview.form.${f.id}`), f.value))}
              >
                {t('overview.copy')}
              </button>
            </dd>
          </div>
        ))}
      </dl>
      <p role="status" className={said?.ok === false ? 'field-error' : 'muted'}>
        {said?.text ?? ''}
      </p>
    </article>
  );
}
