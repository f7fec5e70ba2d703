import { useLayoutEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { directionOf, resolveLanguage } from './i18n/index.js';
import { setFormatLocale } from './format.js';
import { Connections } from './views/Connections.js';
import { Latency } from './views/Latency.js';
import { Logs } from './views/Logs.js';
import { Nodes } from './views/Nodes.js';
import { Overview } from './views/Overview.js';
import { Settings } from './views/Settings.js';
import { Traffic } from './views/Traffic.js';
import { Banner } from './components/Banner.js';
import { useApp } from './components/context.js';
import { Header, panelId, tabId } from './components/Header.js';
import { useDocumentVisible } from './components/use-visible.js';
import { detach } from './detach.js';

export function App({ languages }: { languages: readonly string[] }) {
  const view = useApp((s) => s.view);
  const language = useApp((s) => s.settings?.language);
  const { i18n } = useTranslation();
  // The saved language wins; "auto" follows the browser/system.
  useLayoutEffect(() => {
    const lng = resolveLanguage(language, languages);
    if (i18n.language !== lng) detach(i18n.changeLanguage(lng));
    document.documentElement.lang = lng;
    document.documentElement.dir = directionOf(lng);
  }, [language, languages, i18n]);
  // Numbers, times and country names follow the language i18next now speaks; a change of language
  // re-mounts the views (keyed below) so memoised rows are written again in it. Rare, and cheap.
  const speaking = i18n.language;
  setFormatLocale(speaking);
  // Hidden (closed to the tray, a background tab): the store still takes every event, nothing renders.
  const shown = useDocumentVisible();
  if (!shown) return <div className="app" hidden />;
  return (
    <div className="app" key={speaking}>
      <Header />
      <Banner />
      <main className="main" role="tabpanel" id={panelId(view)} aria-labelledby={tabId(view)} tabIndex={-1}>
        {view === 'overview' ? (
          <Overview />
        ) : view === 'nodes' ? (
          <Nodes />
        ) : view === 'latency' ? (
          <Latency />
        ) : view === 'connections' ? (
          <Connections />
        ) : view === 'traffic' ? (
          <Traffic />
        ) : view === 'logs' ? (
          <Logs />
        ) : (
          <Settings />
        )}
      </main>
    </div>
  );
}
