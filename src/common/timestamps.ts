/**
 * A Date that remembers the microseconds PostgreSQL gave it. JS dates hold milliseconds only, and the
 * contract promises real microseconds in `created_at`.
 */
export class PreciseDate extends Date {
  constructor(
    epochMs: number,
    /** Microseconds within the millisecond, 0 to 999. */
    readonly extraMicros = 0,
  ) {
    super(epochMs);
  }
}

/**
 * Now, to the microsecond. PostgreSQL's now() has microseconds, but the embedded store (WASM) reads a
 * millisecond clock; the key's `created_at` promises real microseconds on both, so the service stamps it.
 */
export function preciseNow(): PreciseDate {
  const highResolution = performance.timeOrigin + performance.now();
  const wall = Date.now();
  // The monotonic clock can drift from the wall clock over days: the wall clock owns the millisecond.
  const epochMs = Math.abs(highResolution - wall) < 1 ? Math.floor(highResolution) : wall;
  return new PreciseDate(epochMs, Math.floor((highResolution % 1) * 1000));
}

// PostgreSQL's text output of timestamptz, e.g. `2026-11-21 09:14:03.482913+00` or `...+05:30`.
const PG_TIMESTAMPTZ =
  /^(\d{4,}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?([+-]\d{2})(?::?(\d{2}))?(?::?(\d{2}))?$/;

export function parsePgTimestamptz(text: string): Date | string {
  const match = PG_TIMESTAMPTZ.exec(text);
  if (!match) return text === 'infinity' || text === '-infinity' ? text : new Date(text);
  const [, day, time, fraction = '', offsetHours, offsetMinutes = '00', offsetSeconds = '00'] = match;
  const micros = fraction.padEnd(6, '0');
  const epochMs = Date.parse(`${day}T${time}.${micros.slice(0, 3)}${offsetHours}:${offsetMinutes}`);
  const sign = offsetHours.startsWith('-') ? -1 : 1;
  return new PreciseDate(epochMs - sign * Number(offsetSeconds) * 1000, Number(micros.slice(3)));
}

/** `2026-11-21T09:14:03.482913Z`: ISO 8601 UTC with six fractional digits. */
export function toIsoMicros(date: Date): string;
export function toIsoMicros(date: Date | null): string | null;
export function toIsoMicros(date: Date | null): string | null {
  if (date === null) return null;
  const extra = date instanceof PreciseDate ? date.extraMicros : 0;
  return `${date.toISOString().slice(0, -1)}${String(extra).padStart(3, '0')}Z`;
}

/** `2026-11-21T09:14:03.482+00:00`: the health timestamp, with an explicit offset. */
export function toIsoWithOffset(date: Date): string {
  return date.toISOString().replace(/Z$/, '+00:00');
}

// ISO 8601 with a mandatory zone (`Z` or `±hh:mm`); date-only or zone-less values are refused.
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/** Parses a client timestamp; null when it is not ISO 8601 with a zone or not a real date. */
export function parseZonedTimestamp(value: string): Date | null {
  if (!ISO_WITH_ZONE.test(value) || !isRealCalendarTime(value)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** `Date` rolls 2099-02-30 over to March 2 and 24:00 to the next day; a client meant neither. */
function isRealCalendarTime(value: string): boolean {
  const [year, month, day, hour, minute, second = 0] = (value.match(/\d+/g) ?? []).slice(0, 6).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59;
}
