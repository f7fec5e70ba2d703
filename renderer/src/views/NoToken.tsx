import { useTranslation } from 'react-i18next';

export function NoToken() {
  const { t } = useTranslation();
  return (
    <main className="no-token">
      <h1>{t('noToken.title')}</h1>
      <p>{t('noToken.body')}</p>
    </main>
  );
}
