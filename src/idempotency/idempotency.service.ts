import { isAnswerNotStored } from './answer-not-stored.js';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import type { onSendHookHandler } from 'fastify';
import {
  IdempotencyKeyInProgressError,
  IdempotencyKeyInvalidError,
  IdempotencyKeyOnUploadError,
  IdempotencyKeyReusedError,
  IdempotencyStoreFullError,
  IdempotentAnswerNotKeptError,
} from '../common/errors.js';
import { type HttpReply, type HttpRequest, pathOf } from '../common/request.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { IdempotencyKeysRepository, type KeyClaim, type StoreBounds } from './idempotency-keys.repository.js';
import { ReplayedResponse, type StoredResponse } from './replayed-response.js';
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
/** 1 to 255 visible ASCII characters (no space, no control character). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export type Admission = { run: KeyClaim } | { replay: StoredResponse };

/**
 * What a streamed answer (a hijacked reply, which no `onSend` hook sees) tells idempotency: the one
 * call the streaming controllers make. Provided by IdempotencyService.
 */
export abstract class IdempotentStreams {
  /**
   * Settles the claim of the request behind `reply`, if it holds one: a finished stream (`final`, its
   * answer as the JSON a retry gets instead of a stream) is stored; an unfinished one (null) gives the
   * key back, so a retry runs again. Call before the stream's last event.
   */
  abstract settleStreamed(reply: HttpReply, final: object | null): Promise<void>;
}

/**
 * `Idempotency-Key` on an authenticated POST, in one place: the claim before the route runs (`claim`,
 * called by IdempotencyGuard, the last global guard), the replay of a stored answer, the answer stored
 * or the key given back when the route has answered: a plain reply by the `onSend` hook `settleOnSend`,
 * a streamed one by `settleStreamed`, and a hijacked reply that ended holding its claim when it closes.
 * request-pipeline.ts installs the guard and the hook.
 */
@Injectable()
export class IdempotencyService implements IdempotentStreams {
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
   * Claims the request's `Idempotency-Key` (a POST by an authenticated caller), or throws the replay of
   * the answer stored for it; 400 for a malformed key or on an upload, and the refusals of `admit`.
   * The replay is thrown, and sent by the global exception filter: a guard can end a request only by
   * throwing (returning false is Nest's 403), and the claim must be a guard, after authentication (it
   * needs the caller's organization), the rate limit and the permissions; the filter already sends
   * every answer that skips the route, with its headers, and sends a replay verbatim.
   */
  async claim(request: HttpRequest, reply: HttpReply): Promise<void> {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || !request.user || key === undefined) return;
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) throw new IdempotencyKeyInvalidError();
    // An upload's parts are read after this point and its multipart boundary changes on each retry.
    if (request.isMultipart()) throw new IdempotencyKeyOnUploadError();
    const hash = requestHash(
      request.method,
      pathOf(request.url),
      request.body,
      request.user.scopes,
      request.user.collectionIds,
    );
    const admission = await this.admit(request.user.organizationId, key, hash);
    if ('replay' in admission) throw new ReplayedResponse(admission.replay);
    this.claims.set(request, admission.run);
    // A hijacked reply that ended still holding its claim (a stream that did not settle) gives it back,
    // rather than answering its retries 409 until the claim runs out.
    reply.raw.once('close', () => {
      if (reply.raw.writableEnded && this.claims.has(request)) void this.settle(request, 500, {}, null);
    });
  }

  /**
   * Stores the answer of a request holding a key before it is sent (Fastify `onSend`), so a client that
   * has its answer and retries anyway is replayed, never told "in progress". Callback style: most
   * answers hold no key and pass straight through, without a promise.
   */
  readonly settleOnSend: onSendHookHandler = (request, reply, payload, done) => {
    if (!this.claims.has(request)) {
      done(null, payload);
      return;
    }
    const send = () => done(null, payload);
    // settle never fails the answer (it logs a storage failure); sent either way.
    void this.settle(request, reply.statusCode, reply.getHeaders(), storable(payload)).then(send, send);
  };

  async settleStreamed(reply: HttpReply, final: object | null): Promise<void> {
    if (final === null) await this.settle(reply.request, 500, {}, null);
    else
      await this.settle(
        reply.request,
        200,
        { ...reply.getHeaders(), 'content-type': JSON_TYPE },
        JSON.stringify(final),
      );
  }

  /**
   * Runs this request (it now holds the key), or replays the stored answer; 422 when the key was used
   * with another request, 409 while that request still runs, 410 when it ran but its answer was not
   * kept, 429 when the key is new and the organization's store is full (nothing runs).
   */
  private async admit(organizationId: string, key: string, requestHash: string): Promise<Admission> {
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

  /**
   * Stores the answer the request holding a claim gave (status, body and the replayed headers), or
   * gives the key back when that answer must not be stored (or `body` is null: it cannot be). A storage
   * failure never fails the answer.
   */
  private async settle(
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
      if (body === null || NOT_STORED.has(status) || !json || isAnswerNotStored(request)) {
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
}

/** The body as text; null for a streamed payload, which cannot be stored. */
function storable(payload: unknown): string | null {
  if (payload === undefined || payload === null) return '';
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) return payload.toString();
  return null;
}

/**
 * What identifies a request for its key: method, path (its trailing slash optional) and body, and a
 * scoped key's scopes: a route that checks scopes itself (POST /mcp's tools) must not replay to a key
 * lacking them what a key holding them was answered (another key's replay is a 422 instead). Likewise a
 * key limited to collections: another key's answer may hold passages of collections it may not reach.
 */
export function requestHash(
  method: string,
  path: string,
  body: unknown,
  scopes?: readonly string[] | null,
  collectionIds?: readonly string[] | null,
): string {
  const grant =
    (scopes ? `\nscopes ${[...scopes].sort().join(' ')}` : '') +
    (collectionIds ? `\ncollections ${collectionIds.join(' ')}` : '');
  return createHash('sha256')
    .update(`${method} ${path.replace(/\/+$/, '')}\n${JSON.stringify(body ?? null)}${grant}`)
    .digest('hex');
}
