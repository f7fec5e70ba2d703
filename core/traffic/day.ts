/** The local calendar day of `ms` as YYYY-MM-DD (the ledger's day: the user's, not UTC's). */
export function dayOf(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** The local day `days` before the day of `ms` (0: that day). */
export function daysBefore(ms: number, days: number): string {
  const d = new Date(ms);
  d.setHours(12, 0, 0, 0); // noon: a daylight-saving change never moves the date
  d.setDate(d.getDate() - days);
  return dayOf(d.getTime());
}
