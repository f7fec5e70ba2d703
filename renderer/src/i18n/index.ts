import i18next, { type i18n } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from '../../../core/api/catalog/en.js';
import { zhCN } from '../../../core/api/catalog/zh-CN.js';
import { zhTW } from '../../../core/api/catalog/zh-TW.js';
import { fa } from '../../../core/api/catalog/fa.js';

import { formatValue } from '../../../core/api/catalog/index.js';

export { directionOf, resolveLanguage, systemLanguage, type Language } from '../../../core/api/catalog/index.js';
import type { Language } from '../../../core/api/catalog/index.js';
import { detach } from '../detach.js';

/** One i18next instance per app (tests make their own). */
export function createI18n(lng: Language): i18n {
  const inst = i18next.createInstance();
  // Every interpolated number in the language's digits (the catalogue's own formatValue, as the tray).
  const numbers = {
    type: 'formatter' as const,
    init: () => undefined,
    add: () => undefined,
    addCached: () => undefined,
    format: (value: unknown, _f: string | undefined, lng: string | undefined) =>
      typeof value === 'number' ? formatValue(lng ?? 'en', value) : value,
  };
  // With resources given inline, init finishes synchronously; its promise only says so.
  detach(
    inst
      .use(initReactI18next)
      .use(numbers)
      .init({
        lng,
        fallbackLng: 'en',
        resources: {
          en: { translation: en },
          'zh-CN': { translation: zhCN },
          'zh-TW': { translation: zhTW },
          fa: { translation: fa },
        },
        interpolation: { escapeValue: false, alwaysFormat: true }, // React escapes
        initAsync: false,
        returnNull: false,
      }),
  );
  return inst;
}
