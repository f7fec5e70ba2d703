import i18next, { type i18n } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en.js';
import { zhCN } from './zh-CN.js';

export type Language = 'en' | 'zh-CN';

/** The system/browser language when the user chose none: Chinese for any zh-*, else English. */
export function systemLanguage(languages: readonly string[]): Language {
  return languages.some((l) => l.toLowerCase().startsWith('zh')) ? 'zh-CN' : 'en';
}

export function resolveLanguage(setting: 'auto' | Language | undefined, languages: readonly string[]): Language {
  return !setting || setting === 'auto' ? systemLanguage(languages) : setting;
}

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
