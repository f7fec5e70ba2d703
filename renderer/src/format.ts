import type { TFunction } from 'i18next';
import { countryNameIn } from '../../core/api/catalog/index.js';

/**
 * The locale numbers and times are written in: the UI language (set by the app when it changes),
 * so Persian gets Persian digits and 简体中文 its own date forms. Module state, like the language.
 */
let locale = 'en';
const numberFormats = new Map<string, Intl.NumberFormat>();

export function setFormatLocale(lng: string): void {
  locale = lng;
}

export function formatNumber(n: number, maxFractionDigits = 0, minFractionDigits = 0): string {
  const key = `${locale}|${maxFractionDigits}|${minFractionDigits}`;
  let f = numberFormats.get(key);
  if (!f)
    numberFormats.set(
      key,
      (f = new Intl.NumberFormat(locale, {
        maximumFractionDigits: maxFractionDigits,
        minimumFractionDigits: minFractionDigits,
        useGrouping: false,
      })),
    );
  return f.format(n);
}

/** Numbers people read: ms, KiB/MiB, mm:ss, "3 min ago". */
export function formatMs(ms: number | null | undefined, t: TFunction): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  return t('format.ms', { value: ms < 10 ? formatNumber(ms, 1, 1) : formatNumber(Math.round(ms)) });
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${formatNumber(Math.round(n))} B`;
  if (n < 1024 ** 2) return `${formatNumber(n / 1024, 1, 1)} KiB`;
  if (n < 1024 ** 3) return `${formatNumber(n / 1024 ** 2, 1, 1)} MiB`;
  return `${formatNumber(n / 1024 ** 3, 2, 2)} GiB`;
}

export function formatRate(bytesPerS: number | null | undefined): string {
  return bytesPerS === null || bytesPerS === undefined ? '–' : `${formatBytes(bytesPerS)}/s`;
}

export function formatCountdown(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const two = (v: number): string => formatNumber(v).padStart(2, formatNumber(0));
  return `${two(Math.floor(s / 60))}:${two(s % 60)}`;
}

/** A log line's time, with seconds, as the language writes it. */
export function formatTime(at: number, lng: string = locale): string {
  return new Date(at).toLocaleTimeString(lng, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function formatAgo(at: number | null | undefined, now: number, t: TFunction): string {
  if (!at) return '–';
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 5) return t('format.ago.now');
  if (s < 60) return t('format.ago.s', { n: formatNumber(s) });
  if (s < 3600) return t('format.ago.min', { n: formatNumber(Math.floor(s / 60)) });
  if (s < 86400) return t('format.ago.h', { n: formatNumber(Math.floor(s / 3600)) });
  return t('format.ago.d', { n: formatNumber(Math.floor(s / 86400)) });
}

export function formatClock(at: number, lng: string): string {
  return new Date(at).toLocaleTimeString(lng, { hour: '2-digit', minute: '2-digit' });
}

/** A country's flag from its ISO code (regional indicator letters); '' for anything else. */
export function flagOf(code: string | null | undefined): string {
  if (!code || !/^[A-Za-z]{2}$/.test(code)) return '';
  return String.fromCodePoint(...[...code.toUpperCase()].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
}

/** A tunnel's protocol as people say it: "OpenVPN UDP", "OpenVPN TCP", "SSTP". */
export function protocolLabel(
  protocol: 'openvpn' | 'sstp' | 'sevpn' | null | undefined,
  proto?: 'tcp' | 'udp' | null,
): string {
  if (protocol === 'sstp') return 'SSTP';
  // SoftEther's own protocol; vpngate.net's column calls it SSL-VPN.
  if (protocol === 'sevpn') return 'SE-VPN';
  if (protocol === 'openvpn') return proto ? `OpenVPN ${proto.toUpperCase()}` : 'OpenVPN';
  return proto ? proto.toUpperCase() : '–';
}

/** A country's name in the UI language (core/api/catalog's countryNameIn); the list's name as the fallback. */
export function countryName(code: string | null | undefined, fallback: string, lng: string = locale): string {
  return countryNameIn(lng, code, fallback);
}
