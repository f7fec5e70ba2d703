import type { TFunction } from 'i18next';

/** Numbers people read: ms, KiB/MiB, mm:ss, "3 min ago". */
export function formatMs(ms: number | null | undefined, t: TFunction): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  return t('format.ms', { value: ms < 10 ? ms.toFixed(1) : Math.round(ms) });
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatRate(bytesPerS: number | null | undefined): string {
  return bytesPerS === null || bytesPerS === undefined ? '–' : `${formatBytes(bytesPerS)}/s`;
}

export function formatCountdown(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

export function formatAgo(at: number | null | undefined, now: number, t: TFunction): string {
  if (!at) return '–';
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 5) return t('format.ago.now');
  if (s < 60) return t('format.ago.s', { n: s });
  if (s < 3600) return t('format.ago.min', { n: Math.floor(s / 60) });
  if (s < 86400) return t('format.ago.h', { n: Math.floor(s / 3600) });
  return t('format.ago.d', { n: Math.floor(s / 86400) });
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
export function protocolLabel(protocol: 'openvpn' | 'sstp' | null | undefined, proto?: 'tcp' | 'udp' | null): string {
  if (protocol === 'sstp') return 'SSTP';
  if (protocol === 'openvpn') return proto ? `OpenVPN ${proto.toUpperCase()}` : 'OpenVPN';
  return proto ? proto.toUpperCase() : '–';
}
