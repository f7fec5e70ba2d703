/**
 * The UI strings the window (renderer/) and the desktop shell (electron/) share, one catalogue per
 * language with the same keys (zh-CN.ts is typed by en.ts's shape). Plain data and two small
 * functions: no imports beyond these files, so both a browser page and the main process load it.
 */
import { en, type Catalog } from './en.js';
import { fa } from './fa.js';
import { zhCN } from './zh-CN.js';
import { zhTW } from './zh-TW.js';

export type { Catalog };
export type Language = 'en' | 'zh-CN' | 'zh-TW' | 'fa';
export const LANGUAGES: Readonly<Record<Language, Catalog>> = { en, 'zh-CN': zhCN, 'zh-TW': zhTW, fa };
/** The languages as people name them in their own language (for a chooser). */
export const LANGUAGE_NAMES: Readonly<Record<Language, string>> = {
  en: 'English',
  'zh-CN': '简体中文',
  'zh-TW': '繁體中文',
  fa: 'فارسی',
};

/** The system's language when the user chose none: the first of its preferences we have a catalogue for, else English. */
export function systemLanguage(languages: readonly string[]): Language {
  // The user's order of preference: the first one we have wins (en-US before zh-CN means English).
  for (const l of languages.map((x) => x.toLowerCase())) {
    // Traditional Chinese by script or by where it is written (Taiwan, Hong Kong, Macau).
    if (/^zh-(hant|tw|hk|mo)\b/.test(l)) return 'zh-TW';
    if (l.startsWith('zh')) return 'zh-CN';
    if (l === 'fa' || l.startsWith('fa-')) return 'fa';
    if (l.startsWith('en')) return 'en';
  }
  return 'en';
}

/** The writing direction of a language's pages: Persian right to left, the rest left to right. */
export function directionOf(lang: string): 'rtl' | 'ltr' {
  return /^(fa|ar|he|ur)(-|$)/i.test(lang) ? 'rtl' : 'ltr';
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
  return text.replace(/\{\{(\w+)\}\}/g, (_, name: string) => (name in vars ? formatValue(lang, vars[name]) : ''));
}

const integerFormats = new Map<string, Intl.NumberFormat>();

/**
 * A value put into a sentence: numbers in the language's own digits (Persian ۱۲۳, not 123), without
 * grouping (ports, counts); strings as they are. The renderer's i18next uses the same function.
 */
export function formatValue(lang: string, value: unknown): string {
  if (typeof value !== 'number') return typeof value === 'string' ? value : value == null ? '' : JSON.stringify(value);
  let f = integerFormats.get(lang);
  if (!f) integerFormats.set(lang, (f = new Intl.NumberFormat(lang, { useGrouping: false, maximumFractionDigits: 2 })));
  return f.format(value);
}

/** A byte count as the window and the tray show it: 1 decimal below GiB, 2 at or above, in the language's digits. */
export function formatBytesIn(lang: string, n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const digits = i === 0 ? 0 : i >= 3 ? 2 : 1;
  const f = new Intl.NumberFormat(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return `${f.format(v)} ${units[i]}`;
}

const regionNames = new Map<string, Intl.DisplayNames | null>();

/**
 * A country's name in `lang`, from its ISO code (Intl.DisplayNames): "韩国" rather than VPN Gate's
 * English "Korea Republic of". `fallback` (the list's own name) when the code is unknown.
 */
export function countryNameIn(lang: string, code: string | null | undefined, fallback: string): string {
  if (!code || !/^[A-Za-z]{2}$/.test(code)) return fallback;
  let names = regionNames.get(lang);
  if (names === undefined) {
    try {
      names = new Intl.DisplayNames([lang], { type: 'region', fallback: 'none' });
    } catch {
      names = null;
    }
    regionNames.set(lang, names);
  }
  return names?.of(code.toUpperCase()) ?? fallback;
}

/** A protocol as the window names it. */
const PROTOCOL_NAMES: Readonly<Record<string, string>> = { openvpn: 'OpenVPN', sstp: 'SSTP', sevpn: 'SE-VPN' };

/**
 * What a network profile changes, in a few words of `lang` ("through the VPN: Everything, HTTPS
 * only on, SE-VPN first"): the window's list of profiles and the desktop's notification say it alike.
 */
export function describeProfileChoices(
  lang: Language,
  c: { mode?: 'rule' | 'global' | 'direct'; httpsOnly?: boolean; protocols?: readonly string[] },
): string {
  const parts: string[] = [];
  if (c.mode) parts.push(translate(lang, 'profiles.what.mode', { mode: translate(lang, `routing.mode.${c.mode}`) }));
  if (c.httpsOnly !== undefined)
    parts.push(translate(lang, c.httpsOnly ? 'profiles.what.httpsOn' : 'profiles.what.httpsOff'));
  if (c.protocols?.[0])
    parts.push(translate(lang, 'profiles.what.first', { protocol: PROTOCOL_NAMES[c.protocols[0]] ?? c.protocols[0] }));
  return parts.join(translate(lang, 'settings.listSeparator'));
}
