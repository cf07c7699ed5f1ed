import { Injectable, Logger } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { IdempotencyKeyInProgressError, IdempotencyKeyReusedError } from '../common/errors.js';
import { IdempotencyKeysRepository, type KeyClaim } from './idempotency-keys.repository.js';
import { type StoredResponse } from './replayed-response.js';

/** How long a key is remembered after its first request (contract: 24 hours). */
export const KEY_TTL_SECONDS = 24 * 60 * 60;
/**
 * How long a claim stays "in progress" without an answer. Every request ends well within it (the
 * model and extraction time out after 30 seconds); past it the execution is presumed dead (its
 * process crashed) and the next request with the key runs instead of answering 409 forever.
 */
export const CLAIM_SECONDS = 5 * 60;

/** Answers a retry must run again: conflicts, throttling and transient failures. */
const NOT_STORED = new Set([409, 429, 500, 503]);
/** Headers a replay carries as first sent: the body's type and the credits as they were then. */
const REPLAYED_HEADERS = ['content-type', 'x-credits-remaining', 'x-credits-reset'];

export type Admission = { run: KeyClaim } | { replay: StoredResponse };

/** The policy of `Idempotency-Key`: claim before running, store the answer, replay it to retries. */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger(IdempotencyService.name);
  /** The claim each running request holds, until its answer is stored or the key given back. */
  private readonly claims = new WeakMap<object, KeyClaim>();

  constructor(private readonly keys: IdempotencyKeysRepository) {}

  /**
   * Runs this request (it now holds the key), or replays the stored answer; 422 when the key was used
   * with another request, 409 while that request still runs.
   */
  async admit(organizationId: string, key: string, requestHash: string): Promise<Admission> {
    const claim = { organizationId, key, requestHash, claimId: randomUUID() };
    // A second pass covers a row that expired or was given back between the claim and the read.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await this.keys.claim(claim, CLAIM_SECONDS, KEY_TTL_SECONDS)) return { run: claim };
      const held = await this.keys.findLive(organizationId, key);
      if (!held) continue;
      if (held.request_hash !== requestHash) throw new IdempotencyKeyReusedError();
      if (held.response_status === null) throw new IdempotencyKeyInProgressError();
      return {
        replay: { status: held.response_status, headers: held.response_headers ?? {}, body: held.response_body ?? '' },
      };
    }
    throw new IdempotencyKeyInProgressError();
  }

  /** Whether `request` holds a claimed key, whose answer `settle` must store. */
  holds(request: object): boolean {
    return this.claims.has(request);
  }

  hold(request: object, claim: KeyClaim): void {
    this.claims.set(request, claim);
  }

  /**
   * Stores the answer the request holding a claim gave (status, body and the replayed headers), or
   * gives the key back when that answer must not be stored (or `body` is null: it cannot be). A storage
   * failure never fails the answer.
   */
  async settle(request: object, status: number, headers: Record<string, unknown>, body: string | null): Promise<void> {
    const claim = this.claims.get(request);
    if (!claim) return;
    this.claims.delete(request);
    try {
      const kept = Object.fromEntries(
        REPLAYED_HEADERS.filter((name) => headers[name] !== undefined).map((name) => [name, String(headers[name])]),
      );
      const json = body === '' || (kept['content-type'] ?? '').startsWith('application/json');
      if (body === null || NOT_STORED.has(status) || !json) await this.keys.release(claim);
      else await this.keys.storeResponse(claim, { status, headers: kept, body });
    } catch (error) {
      // The claim then lapses after CLAIM_SECONDS and a retry runs again.
      this.logger.warn(`idempotency key not settled: ${(error as Error).message}`);
    }
  }
}

/** What identifies a request for its key: method, path (its trailing slash optional) and body. */
export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path.replace(/\/+$/, '')}\n${JSON.stringify(body ?? null)}`)
    .digest('hex');
}
