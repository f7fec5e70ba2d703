/**
 * The UI strings the window (renderer/) and the desktop shell (electron/) share, one catalogue per
 * language with the same keys (zh-CN.ts is typed by en.ts's shape). Plain data and two small
 * functions: no imports beyond these files, so both a browser page and the main process load it.
 */
import { en, type Catalog } from './en.js';
import { zhCN } from './zh-CN.js';

export type { Catalog };
export type Language = 'en' | 'zh-CN';
export const LANGUAGES: Readonly<Record<Language, Catalog>> = { en, 'zh-CN': zhCN };

/** The system's language when the user chose none: the first of its preferences we have a catalogue for, else English. */
export function systemLanguage(languages: readonly string[]): Language {
  // The user's order of preference: the first one we have wins (en-US before zh-CN means English).
  for (const l of languages.map((x) => x.toLowerCase())) {
    if (l.startsWith('zh')) return 'zh-CN';
    if (l.startsWith('en')) return 'en';
  }
  return 'en';
}

export function resolveLanguage(setting: 'auto' | Language | undefined, languages: readonly string[]): Language {
  return !setting || setting === 'auto' ? systemLanguage(languages) : setting;
}

type Vars = Record<string, string | number>;

/**
 * A key ("shell.menu.nodes") in `lang`, with `{{name}}` filled from `vars` and, when `vars.count`
 * is given, the `_one`/`_other` form Intl.PluralRules picks (i18next's convention, which the window
 * uses for the same catalogue). A missing key falls back to English, then to the key itself.
 */
export function translate(lang: Language, key: string, vars: Vars = {}): string {
  const pick = (c: Catalog): string | undefined => {
    const path = key.split('.');
    const leaf = path.pop()!;
    let node: unknown = c;
    for (const p of path) node = (node as Record<string, unknown> | undefined)?.[p];
    const table = node as Record<string, unknown> | undefined;
    if (typeof vars.count === 'number') {
      const form = new Intl.PluralRules(lang).select(vars.count);
      const plural = table?.[`${leaf}_${form}`] ?? table?.[`${leaf}_other`];
      if (typeof plural === 'string') return plural;
    }
    const v = table?.[leaf];
    return typeof v === 'string' ? v : undefined;
  };
  const text = pick(LANGUAGES[lang]) ?? pick(en) ?? key;
  return text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => (name in vars ? String(vars[name]) : ''));
}
