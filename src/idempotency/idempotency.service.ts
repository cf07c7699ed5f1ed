import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import {
  IdempotencyKeyInProgressError,
  IdempotencyKeyReusedError,
  IdempotencyStoreFullError,
  IdempotentAnswerNotKeptError,
} from '../common/errors.js';
import type { HttpRequest } from '../common/http.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { IdempotencyKeysRepository, type KeyClaim, type StoreBounds } from './idempotency-keys.repository.js';
import { type StoredResponse } from './replayed-response.js';
import { storableBody } from './withheld-in-replay.js';

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
const JSON_TYPE = 'application/json; charset=utf-8';

export type Admission = { run: KeyClaim } | { replay: StoredResponse };

/** The policy of `Idempotency-Key`: claim before running, store the answer, replay it to retries. */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger(IdempotencyService.name);
  /** The claim each running request holds, until its answer is stored or the key given back. */
  private readonly claims = new WeakMap<object, KeyClaim>();
  private readonly bounds: StoreBounds;

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.bounds = {
      budgetBytes: config.IDEMPOTENCY_ORG_BUDGET_MB * 1024 * 1024,
      maxAnswerBytes: config.IDEMPOTENCY_MAX_ANSWER_KB * 1024,
    };
  }

  /**
   * Runs this request (it now holds the key), or replays the stored answer; 422 when the key was used
   * with another request, 409 while that request still runs, 410 when it ran but its answer was not
   * kept, 429 when the key is new and the organization's store is full (nothing runs).
   */
  async admit(organizationId: string, key: string, requestHash: string): Promise<Admission> {
    const claim = { organizationId, key, requestHash, claimId: randomUUID() };
    const usage = await this.keys.usage(organizationId);
    const full = usage.full || usage.bytes >= this.bounds.budgetBytes;
    // A second pass covers a row that expired or was given back between the claim and the read.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (!full && (await this.keys.claim(claim, CLAIM_SECONDS, KEY_TTL_SECONDS))) return { run: claim };
      const held = await this.keys.findLive(organizationId, key);
      if (!held || held.abandoned) {
        // A new request (or one whose first run died): it would run and store an answer.
        if (full) throw new IdempotencyStoreFullError(this.config.IDEMPOTENCY_ORG_BUDGET_MB);
        if (!held) await this.keys.forgetExpired(organizationId, key);
        continue;
      }
      if (held.request_hash !== requestHash) throw new IdempotencyKeyReusedError();
      if (held.response_status === null) throw new IdempotencyKeyInProgressError();
      if (held.not_kept) throw new IdempotentAnswerNotKeptError(held.not_kept, this.config.IDEMPOTENCY_MAX_ANSWER_KB);
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
  async settle(
    request: HttpRequest,
    status: number,
    headers: Record<string, unknown>,
    body: string | null,
  ): Promise<void> {
    const claim = this.claims.get(request);
    if (!claim) return;
    this.claims.delete(request);
    try {
      const kept = Object.fromEntries(
        REPLAYED_HEADERS.filter((name) => headers[name] !== undefined).map((name) => [name, String(headers[name])]),
      );
      const json = body === '' || (kept['content-type'] ?? '').startsWith('application/json');
      if (body === null || NOT_STORED.has(status) || !json) {
        await this.keys.release(claim);
        return;
      }
      const stored = storableBody(body, request.routeOptions.config.withheldInReplay);
      const notKept = await this.keys.storeResponse(claim, { status, headers: kept, body: stored }, this.bounds);
      if (notKept) this.logger.log(`idempotent answer not kept (${notKept}); its replay will be refused`);
    } catch (error) {
      // The claim then lapses after CLAIM_SECONDS and a retry runs again.
      this.logger.warn(`idempotency key not settled: ${(error as Error).message}`);
    }
  }

  /**
   * Settles a streamed answer, whose headers are gone and whose reply is hijacked (the `onSend` hook
   * never sees it): a finished stream is stored as its final JSON (`final`), replayed as JSON; an
   * unfinished one (`final` null) gives the key back, so a retry runs again.
   */
  async settleStream(request: HttpRequest, headers: Record<string, unknown>, final: unknown): Promise<void> {
    if (final === null) await this.settle(request, 500, {}, null);
    else await this.settle(request, 200, { ...headers, 'content-type': JSON_TYPE }, JSON.stringify(final));
  }
}

/** What identifies a request for its key: method, path (its trailing slash optional) and body. */
export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path.replace(/\/+$/, '')}\n${JSON.stringify(body ?? null)}`)
    .digest('hex');
}
