import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { resolveLanguage } from '../i18n/index.js';
import { Connections } from '../views/Connections.js';
import { Latency } from '../views/Latency.js';
import { Logs } from '../views/Logs.js';
import { Nodes } from '../views/Nodes.js';
import { Overview } from '../views/Overview.js';
import { Settings } from '../views/Settings.js';
import { Banner } from './Banner.js';
import { useApp } from './context.js';
import { Header } from './Header.js';

export function App({ languages }: { languages: readonly string[] }) {
  const view = useApp((s) => s.view);
  const language = useApp((s) => s.settings?.language);
  const { i18n } = useTranslation();
  // The saved language wins; "auto" follows the browser/system.
  useEffect(() => {
    const lng = resolveLanguage(language, languages);
    if (i18n.language !== lng) void i18n.changeLanguage(lng);
    document.documentElement.lang = lng;
  }, [language, languages, i18n]);
  return (
    <div className="app">
      <Header />
      <Banner />
      <main className="main">
        {view === 'overview' ? <Overview /> : view === 'nodes' ? <Nodes /> : view === 'latency' ? <Latency /> : view === 'connections' ? <Connections /> : view === 'logs' ? <Logs /> : <Settings />}
      </main>
    </div>
  );
}
