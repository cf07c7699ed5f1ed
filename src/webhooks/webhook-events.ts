/** The events an endpoint may subscribe to (CONTRACT, third edition). `ping` is sent by the test action only. */
export const WEBHOOK_EVENT_TYPES = [
  'document.indexed',
  'document.failed',
  'document.deleted',
  'api_key.created',
  'api_key.revoked',
  'api_key.rotated',
  'api_key.expiring',
  'usage.threshold',
  'member.joined',
  'member.removed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Standard Webhooks' retry schedule: the wait after each failed attempt, in ms. After the last one the
 * delivery has failed for good (eight attempts in all).
 */
export const RETRY_SCHEDULE_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
] as const;

/** The wait before the next attempt after `attempts` failed ones, or null when none is left. */
export function retryDelayMs(attempts: number, schedule: readonly number[] = RETRY_SCHEDULE_MS): number | null {
  return attempts >= 1 && attempts <= schedule.length ? schedule[attempts - 1] : null;
}

/** Five days of failures without a success disable an endpoint. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3_600_000;
