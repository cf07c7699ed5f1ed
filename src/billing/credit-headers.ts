import type { Reservation } from './quota.service.js';

/** The headers every metered response carries (query, chat message). */
export function creditHeaders(reservation: Pick<Reservation, 'creditsRemaining' | 'resetsAt'>): Record<string, string> {
  return { 'X-Credits-Remaining': String(reservation.creditsRemaining), 'X-Credits-Reset': reservation.resetsAt };
}

/** The same headers as OpenAPI documents them on a metered operation's success response. */
export const CREDIT_HEADER_DOCS = {
  'X-Credits-Remaining': { schema: { type: 'integer' }, description: 'Credits left in the current period.' },
  'X-Credits-Reset': { schema: { type: 'string', format: 'date-time' }, description: 'When the quota resets (the next period).' },
} as const;
