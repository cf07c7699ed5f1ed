/** Billing periods are calendar months in UTC. */
export function periodBounds(periodStart: string): { start: Date; end: Date } {
  const start = new Date(`${periodStart}T00:00:00Z`);
  const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  return { start, end };
}

export function toIsoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** SQL for the first day of the current UTC month. */
export const CURRENT_PERIOD_SQL = `date_trunc('month', now() AT TIME ZONE 'UTC')::date`;
