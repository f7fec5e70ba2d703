import i18next, { type i18n } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from '../../../core/api/catalog/en.js';
import { zhCN } from '../../../core/api/catalog/zh-CN.js';

export { resolveLanguage, systemLanguage, type Language } from '../../../core/api/catalog/index.js';
import type { Language } from '../../../core/api/catalog/index.js';

/** One i18next instance per app (tests make their own). */
export function createI18n(lng: Language): i18n {
  const inst = i18next.createInstance();
  void inst.use(initReactI18next).init({
    lng,
    fallbackLng: 'en',
    resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
    interpolation: { escapeValue: false }, // React escapes
    initAsync: false,
    returnNull: false,
  });
  return inst;
}
