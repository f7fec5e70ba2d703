import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nextProvider } from 'react-i18next';
import { HttpCoreClient } from './client/http-core-client.js';
import { IpcCoreClient, type GatehopBridge } from './client/ipc-core-client.js';
import { takeToken } from './client/token.js';
import { App } from './App.js';
import { AppContext } from './components/context.js';
import { createI18n, systemLanguage } from './i18n/index.js';
import { connectStore } from './store/feed.js';
import { createAppStore } from './store/index.js';
import { NoToken } from './views/NoToken.js';
import './styles.css';

declare global {
  interface Window {
    /** Set by the Electron preload; absent in a browser. */
    gatehop?: GatehopBridge;
  }
}

const languages = navigator.languages?.length ? navigator.languages : [navigator.language];
const i18n = createI18n(systemLanguage(languages));
const root = createRoot(document.getElementById('root')!);

// The desktop app talks over IPC; the dashboard at /ui over HTTP to the API it was served by.
const bridge = window.gatehop;
const token = bridge ? null : takeToken(window.location, window.sessionStorage, window.history);
if (!bridge && !token) {
  root.render(
    <I18nextProvider i18n={i18n}>
      <NoToken />
    </I18nextProvider>,
  );
} else {
  const client = bridge ? new IpcCoreClient(bridge) : new HttpCoreClient({ baseUrl: '', token: token! });
  const store = createAppStore();
  const { actions } = connectStore(store, client);
  // The desktop shell opens a view by the fragment (#view=nodes from the tray's "More…").
  const viewFromHash = (): void => {
    const m = /(?:^#|&)view=(overview|nodes|latency|connections|logs|settings)\b/.exec(window.location.hash);
    if (m) store.getState().setView(m[1] as 'nodes');
  };
  viewFromHash();
  window.addEventListener('hashchange', viewFromHash);
  root.render(
    <StrictMode>
      <I18nextProvider i18n={i18n}>
        <AppContext.Provider value={{ store, actions, now: Date.now }}>
          <App languages={languages} />
        </AppContext.Provider>
      </I18nextProvider>
    </StrictMode>,
  );
}
