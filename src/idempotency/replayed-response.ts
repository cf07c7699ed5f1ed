import { ApiError } from '../common/errors.js';

export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** An answer stored for an idempotency key: a JSON body (or none) and the headers replayed with it. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A retry's answer: the stored one, sent instead of running the route. It leaves through the global
 * exception filter (as every answer that skips the handler does), which sends status, headers and body.
 */
export class ReplayedResponse extends ApiError {
  readonly status: number;
  /** Stored as it was sent: an answer of an OpenAI-compatible route is not given OpenAI's `error` again. */
  override readonly verbatim = true;

  constructor(private readonly stored: StoredResponse) {
    super('replayed');
    this.status = stored.status;
    Object.assign(this.headers, stored.headers, { [REPLAYED_HEADER]: 'true' });
  }

  /** The stored JSON; nothing for an empty body (the filter then sends none). */
  body(): Record<string, unknown> {
    return (this.stored.body === '' ? undefined : JSON.parse(this.stored.body)) as Record<string, unknown>;
  }
}
