import { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';
import {
  IdempotencyKeyInProgressError,
  IdempotencyKeyReusedError,
  IdempotencyStoreFullError,
  IdempotentAnswerNotKeptError,
} from '../../src/common/errors.js';
import type { Principal } from '../../src/common/principal.js';
import type { HttpReply, HttpRequest } from '../../src/common/request.js';
import { IdempotencyKey } from '../../src/idempotency/idempotency-key.entity.js';
import { IdempotencyKeysRepository } from '../../src/idempotency/idempotency-keys.repository.js';
import { IdempotencyService } from '../../src/idempotency/idempotency.service.js';
import { ReplayedResponse } from '../../src/idempotency/replayed-response.js';
import { insertOrganization, type MediumDatabase, startMediumDatabase } from '../support/medium.js';

/**
 * The idempotency store against the real PostgreSQL, without the application: IdempotencyService and
 * its repository built by hand on a migrated database. The requests and replies are the few fields of
 * Fastify's that the service reads; what is claimed, stored, given back and replayed is the database's.
 * Two services stand for two instances racing with one key.
 */
describe('IdempotencyService on PostgreSQL (claim, settle, release, replay, budget)', () => {
  const MAX_ANSWER_KB = 1;
  const BUDGET_BYTES = 1024 * 1024;
  let medium: MediumDatabase;
  let db: DataSource;
  let service: IdempotencyService;
  let otherInstance: IdempotencyService;
  let caller: Principal;

  beforeAll(async () => {
    medium = await startMediumDatabase(
      { IDEMPOTENCY_MAX_ANSWER_KB: String(MAX_ANSWER_KB), IDEMPOTENCY_ORG_BUDGET_MB: '1' },
      [IdempotencyKey],
    );
    db = medium.dataSource;
    const build = () =>
      new IdempotencyService(new IdempotencyKeysRepository(db.getRepository(IdempotencyKey)), medium.config);
    service = build();
    otherInstance = build();
  });
  afterAll(() => medium.close());

  beforeEach(async () => {
    const { organizationId, userId } = await insertOrganization(db);
    caller = {
      kind: 'jwt',
      userId,
      organizationId,
      role: 'owner',
      isAdmin: false,
      apiKeyId: null,
      keyPrefix: null,
    };
  });

  interface Exchange {
    request: HttpRequest;
    reply: HttpReply;
    raw: EventEmitter & { writableEnded: boolean };
  }

  /** A POST with `key`, as Fastify hands it to the guard, and its reply. */
  function post(key: string, body: unknown = { query: 'What is a refund?' }, path = '/v1/query/'): Exchange {
    const raw = Object.assign(new EventEmitter(), { writableEnded: false });
    const request = {
      method: 'POST',
      url: path,
      headers: { 'idempotency-key': key },
      body,
      user: caller,
      isMultipart: () => false,
      routeOptions: { config: {} },
    } as unknown as HttpRequest;
    const headers: Record<string, string> = {};
    const reply = {
      raw,
      request,
      statusCode: 200,
      getHeaders: () => headers,
      header: (name: string, value: string) => {
        headers[name.toLowerCase()] = value;
        return reply;
      },
    } as unknown as HttpReply;
    return { request, reply, raw };
  }

  /** The route answered: the `onSend` hook stores the answer (or gives the key back) before it is sent. */
  function answer(
    { request, reply }: Exchange,
    status: number,
    body: unknown,
    on: IdempotencyService = service,
  ): Promise<unknown> {
    reply.statusCode = status;
    reply.header('content-type', 'application/json; charset=utf-8');
    reply.header('x-credits-remaining', '41');
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const done = (error: Error | null, sent: unknown) => {
        if (error) reject(error);
        else resolve(sent);
      };
      // Fastify's hook, called as Fastify calls it (its `this`, the instance, is not read).
      on.settleOnSend.call(undefined as never, request, reply, payload, done as never);
    });
  }

  /** The error the claim throws (a replay is one), or null when the request may run. */
  const claim = (exchange: Exchange, on: IdempotencyService = service) =>
    on.claim(exchange.request, exchange.reply).then(
      () => null,
      (error: unknown) => error as Error,
    );

  const row = async (key: string) =>
    (
      await db.query(
        'SELECT response_status, response_body, stored_bytes, not_kept FROM idempotency_keys WHERE organization_id = $1 AND key = $2',
        [caller.organizationId, key],
      )
    )[0] as
      | { response_status: number | null; response_body: string | null; stored_bytes: number; not_kept: string | null }
      | undefined;
  const usedBytes = async () =>
    Number(
      (await db.query('SELECT bytes FROM idempotency_usage WHERE organization_id = $1', [caller.organizationId]))[0]
        ?.bytes ?? 0,
    );

  it('stores the answer of the request that claimed the key and replays it, with its headers, to a retry', async () => {
    const first = post('order-1');
    expect(await claim(first)).toBeNull();
    expect(await answer(first, 201, { id: 'a1' })).toBe('{"id":"a1"}');
    const stored = await row('order-1');
    expect(stored).toMatchObject({ response_status: 201, response_body: '{"id":"a1"}', not_kept: null });
    expect(await usedBytes()).toBe(stored!.stored_bytes);

    const replay = await claim(post('order-1'), otherInstance);
    expect(replay).toBeInstanceOf(ReplayedResponse);
    const replayed = replay as ReplayedResponse;
    expect([replayed.status, replayed.body(), replayed.headers]).toEqual([
      201,
      { id: 'a1' },
      {
        'content-type': 'application/json; charset=utf-8',
        'x-credits-remaining': '41',
        'Idempotent-Replayed': 'true',
      },
    ]);
  });

  it('answers 422 to the key sent again with another body, and 409 while the first request still runs', async () => {
    expect(await claim(post('order-2'))).toBeNull();
    expect(await claim(post('order-2'))).toBeInstanceOf(IdempotencyKeyInProgressError);
    expect(await claim(post('order-2', { query: 'Something else?' }))).toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await claim(post('order-2', undefined, '/v1/search/'))).toBeInstanceOf(IdempotencyKeyReusedError);
  });

  it('lets exactly one of 20 concurrent requests with one key on two instances run', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => claim(post('order-3'), i % 2 ? service : otherInstance)),
    );
    expect(outcomes.filter((outcome) => outcome === null)).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome instanceof IdempotencyKeyInProgressError)).toHaveLength(19);
  });

  it.each([409, 429, 500, 503])('gives the key back after a %i, so that a retry runs again', async (status) => {
    const first = post(`order-${status}`);
    await claim(first);
    await answer(first, status, { detail: 'transient' });
    expect(await row(`order-${status}`)).toBeUndefined();
    expect(await claim(post(`order-${status}`))).toBeNull();
  });

  it('stores a finished stream as its final JSON, and gives the key back for one that did not finish', async () => {
    const finished = post('stream-1');
    await claim(finished);
    await service.settleStreamed(finished.reply, { answer: 'done' });
    const replay = (await claim(post('stream-1'))) as ReplayedResponse;
    expect([replay.status, replay.body()]).toEqual([200, { answer: 'done' }]);

    const broken = post('stream-2');
    await claim(broken);
    await service.settleStreamed(broken.reply, null);
    expect(await row('stream-2')).toBeUndefined();
  });

  it('gives back the claim of a hijacked reply that closed without settling it', async () => {
    const hijacked = post('hijacked');
    await claim(hijacked);
    hijacked.raw.writableEnded = true;
    hijacked.raw.emit('close');
    // The claim is given back in the background of the 'close' event.
    for (let i = 0; i < 50 && (await row('hijacked')); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await row('hijacked')).toBeUndefined();
  });

  it("runs a request whose first run died (its claim ran out), and the dead run's late answer is not stored", async () => {
    const dead = post('order-4');
    await claim(dead);
    await db.query(
      `UPDATE idempotency_keys SET claimed_until = now() - interval '1 second' WHERE organization_id = $1 AND key = $2`,
      [caller.organizationId, 'order-4'],
    );
    const retry = post('order-4');
    expect(await claim(retry, otherInstance)).toBeNull();
    await answer(dead, 200, { from: 'the dead run' });
    await answer(retry, 200, { from: 'the retry' }, otherInstance);
    expect((await row('order-4'))?.response_body).toBe('{"from":"the retry"}');
  });

  describe('bounds', () => {
    it('sends an answer over IDEMPOTENCY_MAX_ANSWER_KB once and answers its retry 410, counting only the row', async () => {
      const large = post('large');
      await claim(large);
      await answer(large, 200, { text: 'x'.repeat(MAX_ANSWER_KB * 1024) });
      const stored = await row('large');
      expect(stored).toMatchObject({ response_status: 200, response_body: null, not_kept: 'too_large' });
      expect(await usedBytes()).toBe(stored!.stored_bytes);
      const retry = await claim(post('large'));
      expect(retry).toBeInstanceOf(IdempotentAnswerNotKeptError);
      expect(retry?.message).toBe(new IdempotentAnswerNotKeptError('too_large', MAX_ANSWER_KB).message);
    });

    it("does not keep an answer the organization's budget cannot take, and then refuses new keys with 429 until bytes are given back", async () => {
      await db.query(`INSERT INTO idempotency_usage (organization_id, bytes) VALUES ($1, $2)`, [
        caller.organizationId,
        BUDGET_BYTES - 300,
      ]);
      const last = post('nearly-full');
      await claim(last);
      await answer(last, 200, { text: 'y'.repeat(200) });
      expect(await row('nearly-full')).toMatchObject({ not_kept: 'store_full', response_body: null });
      expect(await claim(post('nearly-full'))).toBeInstanceOf(IdempotentAnswerNotKeptError);

      const refused = await claim(post('a-new-key'));
      expect(refused).toBeInstanceOf(IdempotencyStoreFullError);
      expect(await row('a-new-key')).toBeUndefined();

      // The purge gives the expired rows' bytes back and lifts the mark.
      await db.query(
        `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE organization_id = $1`,
        [caller.organizationId],
      );
      await db.query('UPDATE idempotency_usage SET bytes = bytes - $2 WHERE organization_id = $1', [
        caller.organizationId,
        BUDGET_BYTES - 300,
      ]);
      expect(await new IdempotencyKeysRepository(db.getRepository(IdempotencyKey)).deleteExpired(100)).toBe(1);
      expect(await usedBytes()).toBe(0);
      expect(await claim(post('a-new-key'))).toBeNull();
    });
  });
});
