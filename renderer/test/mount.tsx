/**
 * Renders a piece of the window as the app does: inside the i18n provider and the app context,
 * with `actions` given and every other action answering ok. Returns the store.
 */
import { render } from '@testing-library/react';
import type React from 'react';
import { I18nextProvider } from 'react-i18next';
import { AppContext } from '../src/components/context.js';
import { createI18n, type Language } from '../src/i18n/index.js';
import type { Actions } from '../src/store/feed.js';
import { createAppStore, type AppStore } from '../src/store/index.js';

export function mount(
  ui: React.ReactElement,
  store: AppStore = createAppStore(),
  actions: Partial<Actions> = {},
  lng: Language = 'en',
): AppStore {
  const all = new Proxy(actions, {
    get: (o, k) => (o as Record<string | symbol, unknown>)[k] ?? (async () => ({ ok: true, value: null })),
  }) as Actions;
  render(
    <I18nextProvider i18n={createI18n(lng)}>
      <AppContext.Provider value={{ store, actions: all, now: () => 100_000 }}>{ui}</AppContext.Provider>
    </I18nextProvider>,
  );
  return store;
}
