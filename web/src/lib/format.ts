const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const utcDay = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const number = new Intl.NumberFormat();

export const formatDateTime = (iso: string): string => dateTime.format(new Date(iso));
export const formatDate = (iso: string): string => dateOnly.format(new Date(iso));
/** A `YYYY-MM-DD` day of the usage ledger (UTC days), e.g. "Nov 21". */
export const formatDay = (day: string): string => utcDay.format(new Date(`${day}T00:00:00Z`));
export const formatNumber = (n: number): string => number.format(n);
/** A count with its noun, singular for one: "1 chunk", "3 chunks". */
export const formatCount = (n: number, noun: string, plural = `${noun}s`): string =>
  `${formatNumber(n)} ${n === 1 ? noun : plural}`;

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** `YYYY-MM-DD` of a moment in the browser's time zone, the format of `<input type="date">`. */
export function toDateInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The last second of a picked day in the browser's time zone, as the API wants it: ISO 8601 with Z. */
export function endOfLocalDay(day: string): string {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(year, month - 1, date, 23, 59, 59).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export const localTimeZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;
