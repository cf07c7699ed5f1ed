import type { Reservation } from './quota.service.js';

/** The headers every metered response carries (query, chat message). */
export function creditHeaders(reservation: Pick<Reservation, 'creditsRemaining' | 'resetsAt'>): Record<string, string> {
  return { 'X-Credits-Remaining': String(reservation.creditsRemaining), 'X-Credits-Reset': reservation.resetsAt };
}
