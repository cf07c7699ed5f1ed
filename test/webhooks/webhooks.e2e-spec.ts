import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { sleep, until } from '../support/core.js';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A local receiver: records every request; `answer` decides each reply by path. */
async function startReceiver(answer: (path: string, response: http.ServerResponse) => void) {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        headers: request.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      answer(request.url ?? '', response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    received,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    at: (path: string) => received.filter((request) => request.path === path),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

const FAST = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_TIMEOUT_MS: '700' };

describe('webhooks', () => {
  let test: TestApp;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let alice: SignedInUser;

  beforeAll(async () => {
    receiver = await startReceiver((path, response) => {
      if (path.startsWith('/fail')) response.writeHead(500).end('boom '.repeat(500));
      else if (path.startsWith('/gone')) response.writeHead(410).end('gone');
      else if (path.startsWith('/nul')) response.writeHead(path.startsWith('/nul-fail') ? 500 : 200).end('ok\u0000bye');
      else if (path.startsWith('/redirect')) response.writeHead(302, { location: '/landing' }).end();
      else if (path.startsWith('/hang'))
        return; // never answers
      else response.writeHead(200).end('ok');
    });
    test = await startTestApp(FAST);
    alice = await signUp(test);
  });
  afterAll(async () => {
    await test.close();
    await receiver.close();
  });

  async function createEndpoint(user: SignedInUser, path: string, events: string[]) {
    const response = await test
      .http()
      .post('/v1/webhooks/')
      .set(user.auth)
      .send({ url: receiver.url(path), events })
      .expect(201);
    return response.body as { id: string; secret: string; url: string };
  }

  const deliveriesOf = async (user: SignedInUser, id: string) =>
    (await test.http().get(`/v1/webhooks/${id}/deliveries/`).set(user.auth).expect(200)).body as {
      count: number;
      results: { id: string; status: string; attempts: number; response_status: number | null; type: string }[];
    };

  it('creates an endpoint with a whsec_ secret shown once, no-store, stored encrypted', async () => {
    const response = await test
      .http()
      .post('/v1/webhooks/')
      .set(alice.auth)
      .send({ url: receiver.url('/create'), events: ['document.indexed'], description: 'main' })
      .expect(201);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(response.body.secret.slice(6), 'base64')).toHaveLength(32);
    expect(response.body).toMatchObject({ url: receiver.url('/create'), events: ['document.indexed'], enabled: true });
    const listed = await test.http().get(`/v1/webhooks/${response.body.id}/`).set(alice.auth).expect(200);
    expect(listed.body.secret).toBeUndefined();
    const { rows } = await test.db.query('SELECT * FROM webhook_endpoints WHERE id = $1', [response.body.id]);
    expect(JSON.stringify(rows[0])).not.toContain(response.body.secret.slice(6));
  });

  it('keeps no secret in the Idempotency-Key store: a replayed create or rotation says the secret is withheld', async () => {
    const withheld =
      'The signing secret is shown once, in the first answer, and is not kept. If it was lost, rotate the secret.';
    const body = { url: receiver.url('/idempotent'), events: ['document.indexed'] };
    const send = (path: string, key: string, payload: object = {}) =>
      test.http().post(path).set(alice.auth).set('Idempotency-Key', key).send(payload);
    const created = await send('/v1/webhooks/', 'webhook-create-1', body).expect(201);
    const replayed = await send('/v1/webhooks/', 'webhook-create-1', body).expect(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.headers['cache-control']).toBe('no-store');
    expect(replayed.body.secret).toBeUndefined();
    expect(replayed.body).toMatchObject({ id: created.body.id, secret_withheld: withheld });

    const rotatePath = `/v1/webhooks/${created.body.id}/rotate-secret/`;
    const rotated = await send(rotatePath, 'webhook-rotate-1').expect(200);
    const rotatedAgain = await send(rotatePath, 'webhook-rotate-1').expect(200);
    expect(rotatedAgain.body).toEqual({ secret_withheld: withheld });

    const { rows } = await test.db.query('SELECT key, response_body FROM idempotency_keys');
    const stored = JSON.stringify(rows);
    expect(stored).toContain('webhook-rotate-1');
    for (const secret of [created.body.secret, rotated.body.secret]) expect(stored).not.toContain(secret.slice(6));
    expect(stored).not.toContain('whsec_');
  });

  it('refuses an unknown event type (400 naming events), and another organization sees 404', async () => {
    const bad = await test
      .http()
      .post('/v1/webhooks/')
      .set(alice.auth)
      .send({ url: receiver.url('/x'), events: ['document.created'] })
      .expect(400);
    expect(bad.body.detail).toMatch(/^events: "document.created" is not an event type/);
    expect(bad.body.fields.events).toHaveLength(1);
    const mine = await createEndpoint(alice, '/mine', ['api_key.created']);
    const bob = await signUp(test);
    for (const path of [`/v1/webhooks/${mine.id}/`, `/v1/webhooks/${mine.id}/deliveries/`])
      await test.http().get(path).set(bob.auth).expect(404);
    await test.http().delete(`/v1/webhooks/${mine.id}/`).set(bob.auth).expect(404);
    await test.http().post(`/v1/webhooks/${mine.id}/rotate-secret/`).set(bob.auth).expect(404);
    await test.http().delete(`/v1/webhooks/${mine.id}/`).set(alice.auth).expect(204);
  });

  it("an id that is not a UUID is the same 404 as an unknown one (never the word 'undefined')", async () => {
    const mine = await createEndpoint(alice, '/ids', ['api_key.created']);
    for (const path of [
      '/v1/webhooks/not-a-uuid/',
      '/v1/webhooks/00000000-0000-4000-8000-000000000000/',
      `/v1/webhooks/${mine.id}/deliveries/not-a-uuid/retry/`,
    ]) {
      const method = path.endsWith('retry/') ? 'post' : 'get';
      const refused = await test.http()[method](path).set(alice.auth).expect(404);
      expect({ path, body: refused.body }).toEqual({ path, body: { detail: 'Not found.' } });
    }
    await test.http().delete(`/v1/webhooks/${mine.id}/`).set(alice.auth).expect(204);
  });

  it('refuses the 21st endpoint with a 400', async () => {
    const carol = await signUp(test);
    for (let i = 0; i < 20; i++) await createEndpoint(carol, `/n${i}`, ['api_key.created']);
    const refused = await test
      .http()
      .post('/v1/webhooks/')
      .set(carol.auth)
      .send({ url: receiver.url('/n21'), events: ['api_key.created'] })
      .expect(400);
    expect(refused.body).toEqual({ detail: 'An organization may have at most 20 webhook endpoints.' });
  });

  it('delivers document.indexed and document.deleted, signed so that standardwebhooks verify() accepts them', async () => {
    const dave = await signUp(test);
    const endpoint = await createEndpoint(dave, '/docs', ['document.indexed', 'document.deleted']);
    const document = (
      await test.http().post('/v1/documents/').set(dave.auth).send({ title: 'Refunds', content: 'Within 30 days.' })
    ).body as { id: string; collection_id: string };
    const started = Date.now();
    const [indexed] = await until(() => receiver.at('/docs').length >= 1 && receiver.at('/docs'));
    expect(Date.now() - started).toBeLessThan(5000);
    await test.http().delete(`/v1/documents/${document.id}/`).set(dave.auth).expect(204);
    const [, deleted] = await until(() => receiver.at('/docs').length >= 2 && receiver.at('/docs'));
    const verifier = new Webhook(endpoint.secret);
    for (const request of [indexed, deleted])
      expect(() => verifier.verify(request.body, request.headers)).not.toThrow();
    const bodies = [indexed, deleted].map((request) => JSON.parse(request.body));
    expect(bodies[0]).toMatchObject({
      type: 'document.indexed',
      // The document's collection: its organization's `default` (whose id is the organization's).
      data: { document_id: document.id, collection_id: document.collection_id, title: 'Refunds' },
    });
    expect(document.collection_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(bodies[0].timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(bodies[1]).toMatchObject({
      type: 'document.deleted',
      data: { document_id: document.id, collection_id: document.collection_id },
    });
    await until(async () => (await deliveriesOf(dave, endpoint.id)).results.every((d) => d.status === 'delivered'));
  });

  it('sends document.failed with the reason when an upload cannot be read (not for a refused file type)', async () => {
    const fay = await signUp(test);
    const endpoint = await createEndpoint(fay, '/failed', ['document.failed']);
    const upload = (content: string, name: string) =>
      test.http().post('/v1/documents/').set(fay.auth).attach('file', Buffer.from(content), name).expect(400);
    // Refused before anything is read: the caller's mistake, not a document that failed.
    expect((await upload('MZ', 'tool.exe')).body.fields).toHaveProperty('file');
    const refused = await upload('<html><head><script>alert(1)</script></head><body> </body></html>', 'blank.html');
    expect(refused.body).toEqual({
      detail: 'file: The file contains no text.',
      fields: { file: ['The file contains no text.'] },
    });
    const [failed] = await until(() => receiver.at('/failed').length >= 1 && receiver.at('/failed'));
    const event = new Webhook(endpoint.secret).verify(failed.body, failed.headers);
    expect(event).toEqual({
      type: 'document.failed',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      data: { document_id: null, collection_id: null, title: 'blank.html', reason: 'The file contains no text.' },
    });
    const { rows } = await test.db.query(
      `SELECT count(*)::int AS n FROM webhook_events e JOIN webhook_endpoints w ON w.organization_id = e.organization_id
        WHERE w.id = $1 AND e.type = 'document.failed'`,
      [endpoint.id],
    );
    expect(rows[0].n).toBe(1);
    await test
      .http()
      .get('/v1/documents/')
      .set(fay.auth)
      .expect(200, { count: 0, next: null, previous: null, results: [] });
  });

  it('sends api_key events (never the key) and usage.threshold at 80 % and 100 %, once each', async () => {
    const erin = await signUp(test);
    const endpoint = await createEndpoint(erin, '/keys', ['api_key.created', 'api_key.revoked', 'usage.threshold']);
    const key = await createKey(test, erin, 'partner');
    await test.http().post(`/v1/billings/api-keys/${key.id}/revoke/`).set(erin.auth).expect(200);
    await test.db.query(
      'UPDATE subscriptions SET monthly_credits = 5 WHERE organization_id = (SELECT organization_id FROM users WHERE id = $1)',
      [erin.id],
    );
    for (let i = 0; i < 6; i++)
      await test
        .http()
        .post('/v1/query/')
        .set(erin.auth)
        .send({ query: `q${i}` });
    const requests = await until(() => receiver.at('/keys').length >= 4 && receiver.at('/keys'));
    await sleep(300);
    const verifier = new Webhook(endpoint.secret);
    const bodies = receiver.at('/keys').map((request) => {
      verifier.verify(request.body, request.headers);
      expect(request.body).not.toContain(key.key);
      return JSON.parse(request.body);
    });
    expect(requests).toHaveLength(4);
    expect(bodies.map((body) => body.type).sort()).toEqual([
      'api_key.created',
      'api_key.revoked',
      'usage.threshold',
      'usage.threshold',
    ]);
    expect(bodies.find((body) => body.type === 'api_key.created').data).toEqual({
      key_id: key.id,
      key_prefix: key.key_prefix,
      name: 'partner',
    });
    const thresholds = bodies.filter((body) => body.type === 'usage.threshold').map((body) => body.data);
    expect(thresholds).toEqual(
      expect.arrayContaining([
        { percent: 80, credits_total: 5, credits_used: 4 },
        { percent: 100, credits_total: 5, credits_used: 5 },
      ]),
    );
  });

  it('counts thresholds of a two-billion-credit quota without overflowing (the spend still succeeds)', async () => {
    const big = await signUp(test);
    await createEndpoint(big, '/big', ['usage.threshold']);
    await test.db.query(
      `UPDATE subscriptions SET monthly_credits = 2000000000, credits_used = 1599999999
        WHERE organization_id = (SELECT organization_id FROM users WHERE id = $1)`,
      [big.id],
    );
    await test.http().post('/v1/query/').set(big.auth).send({ query: 'big' }).expect(200);
    const [request] = await until(() => receiver.at('/big').length >= 1 && receiver.at('/big'));
    expect(JSON.parse(request.body).data).toEqual({ percent: 80, credits_total: 2000000000, credits_used: 1600000000 });
  });

  it('sends api_key.expiring within a minute for a key entering its 1-day window', async () => {
    const fay = await signUp(test);
    const endpoint = await createEndpoint(fay, '/expiring', ['api_key.expiring']);
    const key = await createKey(test, fay, 'short-lived');
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    await test
      .http()
      .patch(`/v1/billings/api-keys/${key.id}/update/`)
      .set(fay.auth)
      .send({ expires_at: expiresAt })
      .expect(200);
    // The scan runs every 20 s on each instance; here it is run at once, twice: still one event.
    const { DeliveryQueue } = await import('../../src/webhooks/delivery-queue.js');
    const queue = test.app.get(DeliveryQueue);
    await queue.recordExpiringKeys();
    await queue.recordExpiringKeys();
    const [request] = await until(() => receiver.at('/expiring').length >= 1 && receiver.at('/expiring'));
    await sleep(300);
    expect(receiver.at('/expiring')).toHaveLength(1);
    new Webhook(endpoint.secret).verify(request.body, request.headers);
    expect(JSON.parse(request.body).data).toMatchObject({ key_id: key.id, name: 'short-lived', days: 1 });
  });

  it('records an answer whose body holds a NUL byte (PostgreSQL cannot store one), so it is not sent again and again', async () => {
    const hal = await signUp(test);
    const delivered = await createEndpoint(hal, '/nul', ['api_key.created']);
    const failing = await createEndpoint(hal, '/nul-fail', ['api_key.created']);
    await createKey(test, hal);
    const settled = async (endpointId: string, status: string) =>
      until(async () => {
        const { rows } = await test.db.query(
          `SELECT status, attempts, response_status, response_body FROM webhook_deliveries
            WHERE endpoint_id = $1 AND status = $2`,
          [endpointId, status],
        );
        return rows[0];
      });
    expect(await settled(delivered.id, 'delivered')).toEqual({
      status: 'delivered',
      attempts: 1,
      response_status: 200,
      response_body: 'ok\ufffdbye',
    });
    expect(await settled(failing.id, 'pending')).toMatchObject({ attempts: 1, response_status: 500 });
    await sleep(300);
    expect(receiver.at('/nul')).toHaveLength(1);
  });

  it('retries a 500 on the schedule with the same webhook-id', async () => {
    const gus = await signUp(test);
    const endpoint = await createEndpoint(gus, '/fail', ['api_key.created']);
    await createKey(test, gus);
    await until(() => receiver.at('/fail').length >= 1);
    const first = await until(async () => {
      const { rows } = await test.db.query(
        `SELECT status, attempts, response_status, length(response_body) AS kept,
                extract(epoch FROM next_attempt_at - last_attempt_at) AS wait
           FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`,
        [endpoint.id],
      );
      return rows[0];
    });
    expect(first).toMatchObject({ attempts: 1, response_status: 500, kept: 1024 });
    expect(Number(first.wait)).toBeCloseTo(5, 0);
    // The clock moved on: the retry is due.
    await test.db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_id = $1`, [endpoint.id]);
    await until(() => receiver.at('/fail').length >= 2);
    const second = await until(async () => {
      const { rows } = await test.db.query(
        `SELECT attempts, extract(epoch FROM next_attempt_at - last_attempt_at) AS wait
           FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending' AND attempts = 2`,
        [endpoint.id],
      );
      return rows[0];
    });
    expect(Number(second.wait)).toBeCloseTo(300, 0);
    const [a, b] = receiver.at('/fail');
    expect(a.headers['webhook-id']).toBe(b.headers['webhook-id']);
    const metrics = (await test.http().get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/kqs_webhook_deliveries_total\{outcome="retry"\} [1-9]/);
    expect(metrics).toMatch(/kqs_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(a.body).toBe(b.body);
    const verifier = new Webhook(endpoint.secret);
    verifier.verify(b.body, b.headers);
  });

  it('counts a receiver that hangs as a timeout, and retries it', async () => {
    const hal = await signUp(test);
    const endpoint = await createEndpoint(hal, '/hang', ['api_key.created']);
    await createKey(test, hal);
    const row = await until(async () => {
      const { rows } = await test.db.query(
        `SELECT attempts, last_error, response_status FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending' AND attempts = 1`,
        [endpoint.id],
      );
      return rows[0];
    });
    expect(row).toEqual({ attempts: 1, last_error: 'No answer within 700 ms.', response_status: null });
    await test.db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE endpoint_id = $1`, [endpoint.id]);
    await until(() => receiver.at('/hang').length >= 2);
  });

  it('does not follow a redirect: a 3xx is a failure', async () => {
    const ivy = await signUp(test);
    const endpoint = await createEndpoint(ivy, '/redirect', ['api_key.created']);
    await createKey(test, ivy);
    const [delivery] = await until(async () => {
      const { results } = await deliveriesOf(ivy, endpoint.id);
      return results[0]?.attempts === 1 && results[0].status === 'pending' ? results : undefined;
    });
    expect(delivery.response_status).toBe(302);
    expect(receiver.at('/landing')).toHaveLength(0);
  });

  it('disables the endpoint at once on 410, and after five days of failures', async () => {
    const jan = await signUp(test);
    const gone = await createEndpoint(jan, '/gone', ['api_key.created']);
    await createKey(test, jan);
    const disabled = await until(async () => {
      const body = (await test.http().get(`/v1/webhooks/${gone.id}/`).set(jan.auth).expect(200)).body;
      return body.enabled === false ? body : undefined;
    });
    expect(disabled.disabled_reason).toBe('The endpoint answered 410 Gone.');
    expect((await deliveriesOf(jan, gone.id)).results[0]).toMatchObject({ status: 'failed', response_status: 410 });

    const kim = await signUp(test);
    const failing = await createEndpoint(kim, '/fail-long', ['api_key.created']);
    await test.db.query(
      `UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`,
      [failing.id],
    );
    await createKey(test, kim);
    const off = await until(async () => {
      const body = (await test.http().get(`/v1/webhooks/${failing.id}/`).set(kim.auth).expect(200)).body;
      return body.enabled === false ? body : undefined;
    });
    expect(off.disabled_reason).toBe('Deliveries failed for five days.');
  });

  it('rotate-secret: both signatures for 24 h; test sends a ping; retry sends again with the same id', async () => {
    const lee = await signUp(test);
    const endpoint = await createEndpoint(lee, '/ping', ['api_key.created']);
    const rotated = await test.http().post(`/v1/webhooks/${endpoint.id}/rotate-secret/`).set(lee.auth).expect(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    expect(rotated.body.secret).toMatch(/^whsec_/);
    await test.http().post(`/v1/webhooks/${endpoint.id}/test/`).set(lee.auth).expect(202);
    const [ping] = await until(() => receiver.at('/ping').length >= 1 && receiver.at('/ping'));
    expect(ping.headers['webhook-signature'].split(' ')).toHaveLength(2);
    new Webhook(endpoint.secret).verify(ping.body, ping.headers);
    new Webhook(rotated.body.secret).verify(ping.body, ping.headers);
    expect(JSON.parse(ping.body)).toMatchObject({ type: 'ping', data: { webhook_id: endpoint.id } });
    const [delivery] = await until(async () => {
      const { results } = await deliveriesOf(lee, endpoint.id);
      return results[0]?.status === 'delivered' ? results : undefined;
    });
    await test.http().post(`/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/retry/`).set(lee.auth).expect(202);
    const again = await until(() => receiver.at('/ping').length >= 2 && receiver.at('/ping')[1]);
    expect(again.headers['webhook-id']).toBe(ping.headers['webhook-id']);
  });

  it("sends api_key.rotated with the new key and rotated_from, and usage.threshold for a key's cap with key_id", async () => {
    const max = await signUp(test);
    const endpoint = await createEndpoint(max, '/rotated', ['api_key.rotated', 'usage.threshold']);
    const capped = (
      await test
        .http()
        .post('/v1/billings/api-keys/')
        .set(max.auth)
        .send({ name: 'capped', monthly_credit_limit: 5 })
        .expect(201)
    ).body;
    for (let i = 0; i < 4; i++)
      await test
        .http()
        .post('/v1/query/')
        .set({ Authorization: `Bearer ${capped.key}` })
        .send({ query: `q${i}` })
        .expect(200);
    const rotated = (await test.http().post(`/v1/billings/api-keys/${capped.id}/rotate/`).set(max.auth).expect(201))
      .body;
    const requests = await until(() => receiver.at('/rotated').length >= 2 && receiver.at('/rotated'));
    const verifier = new Webhook(endpoint.secret);
    const bodies = requests.map((request) => verifier.verify(request.body, request.headers) as Record<string, never>);
    expect(bodies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'usage.threshold',
          data: { percent: 80, credits_total: 5, credits_used: 4, key_id: capped.id },
        }),
        expect.objectContaining({
          type: 'api_key.rotated',
          data: { key_id: rotated.id, key_prefix: rotated.key_prefix, name: 'capped', rotated_from: capped.id },
        }),
      ]),
    );
    expect(requests.map((request) => request.body).join()).not.toContain(rotated.key);
  });

  it("counts a rotated key's cap as the lineage's newest key's, and names that key", async () => {
    const lin = await signUp(test);
    await createEndpoint(lin, '/lineage', ['usage.threshold']);
    const first = (
      await test
        .http()
        .post('/v1/billings/api-keys/')
        .set(lin.auth)
        .send({ name: 'lineage', monthly_credit_limit: 5 })
        .expect(201)
    ).body;
    const successor = (
      await test
        .http()
        .post(`/v1/billings/api-keys/${first.id}/rotate/`)
        .set(lin.auth)
        .send({ grace_period_seconds: 3600 })
        .expect(201)
    ).body;
    await test
      .http()
      .patch(`/v1/billings/api-keys/${successor.id}/update/`)
      .set(lin.auth)
      .send({ monthly_credit_limit: 10 })
      .expect(200);
    for (let i = 0; i < 8; i++)
      await test
        .http()
        .post('/v1/query/')
        .set({ Authorization: `Bearer ${i % 2 ? first.key : successor.key}` })
        .send({ query: `q${i}` })
        .expect(200);
    const [request] = await until(() => receiver.at('/lineage').length >= 1 && receiver.at('/lineage'));
    expect(JSON.parse(request.body).data).toEqual({
      percent: 80,
      credits_total: 10,
      credits_used: 8,
      key_id: successor.id,
    });
    await sleep(500);
    expect(receiver.at('/lineage')).toHaveLength(1);
  });

  it('sends the 7-day api_key.expiring for a key three days from expiry', async () => {
    const ned = await signUp(test);
    await createEndpoint(ned, '/seven', ['api_key.expiring']);
    const key = await createKey(test, ned, 'three days');
    await test
      .http()
      .patch(`/v1/billings/api-keys/${key.id}/update/`)
      .set(ned.auth)
      .send({ expires_at: new Date(Date.now() + 3 * 86_400_000).toISOString() })
      .expect(200);
    const { DeliveryQueue } = await import('../../src/webhooks/delivery-queue.js');
    await test.app.get(DeliveryQueue).recordExpiringKeys();
    const [request] = await until(() => receiver.at('/seven').length >= 1 && receiver.at('/seven'));
    expect(JSON.parse(request.body).data).toMatchObject({ key_id: key.id, days: 7 });
  });

  it('purges settled events past WEBHOOK_RETENTION_DAYS, never one still pending', async () => {
    const oli = await signUp(test);
    const settled = await createEndpoint(oli, '/purge-ok', ['api_key.created']);
    await createEndpoint(oli, '/fail-purge', ['api_key.created']);
    const pam = await signUp(test);
    await createEndpoint(pam, '/fail-purge', ['api_key.revoked']);
    await createKey(test, oli);
    const key = await createKey(test, pam);
    await test.http().post(`/v1/billings/api-keys/${key.id}/revoke/`).set(pam.auth).expect(200);
    await until(async () => (await deliveriesOf(oli, settled.id)).results[0]?.status === 'delivered');
    await until(() => receiver.at('/fail-purge').length >= 2);
    const { rows: before } = await test.db.query(
      `SELECT count(*)::int AS settled FROM webhook_events e
        WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'sending'))`,
    );
    expect(before[0].settled).toBeGreaterThan(0);
    await test.db.query(`UPDATE webhook_events SET created_at = now() - interval '31 days'`);
    const { WebhookPurger } = await import('../../src/webhooks/webhook-purger.js');
    const purged = await test.app.get(WebhookPurger).purgeExpired();
    const { rows } = await test.db.query(
      `SELECT count(*) FILTER (WHERE pending)::int AS kept, count(*) FILTER (WHERE NOT pending)::int AS stale
         FROM (SELECT EXISTS (SELECT 1 FROM webhook_deliveries d
                               WHERE d.event_id = e.id AND d.status IN ('pending', 'sending')) AS pending
                 FROM webhook_events e) events`,
    );
    expect(purged).toBeGreaterThanOrEqual(before[0].settled);
    expect(rows[0].stale).toBe(0);
    // The events still being retried (to /fail-purge) stay.
    expect(rows[0].kept).toBeGreaterThanOrEqual(2);
  });

  it('an API key without organization:write gets 403', async () => {
    const key = (
      await test
        .http()
        .post('/v1/billings/api-keys/')
        .set(alice.auth)
        .send({ name: 'narrow', scopes: ['query'] })
        .expect(201)
    ).body;
    await test
      .http()
      .get('/v1/webhooks/')
      .set({ Authorization: `Bearer ${key.key}` })
      .expect(403);
  });
});

describe('webhook URLs with the address rules on', () => {
  let test: TestApp;
  let user: SignedInUser;
  beforeAll(async () => {
    test = await startTestApp({ WEBHOOK_POLL_INTERVAL_MS: '50' });
    user = await signUp(test);
  });
  afterAll(() => test.close());

  it.each([
    ['http://hooks.example.com/in', 'url: Must be an https URL.'],
    ['https://localhost/hook', 'url: Must not point to a loopback, private, link-local or metadata address.'],
    ['https://127.0.0.1/hook', 'url: Must not point to a loopback, private, link-local or metadata address.'],
    ['https://169.254.169.254/latest', 'url: Must not point to a loopback, private, link-local or metadata address.'],
    ['https://[::ffff:10.0.0.1]/', 'url: Must not point to a loopback, private, link-local or metadata address.'],
  ])('refuses %s with a 400 naming url, and stores nothing', async (url, detail) => {
    const response = await test
      .http()
      .post('/v1/webhooks/')
      .set(user.auth)
      .send({ url, events: ['document.indexed'] })
      .expect(400);
    expect(response.body.detail).toBe(detail);
    const { rows } = await test.db.query('SELECT count(*)::int AS n FROM webhook_endpoints');
    expect(rows[0].n).toBe(0);
  });

  it('refuses a PATCH to a refused url (400 naming url) and keeps the old one', async () => {
    // A literal public address passes without DNS (this machine has none).
    const created = await test
      .http()
      .post('/v1/webhooks/')
      .set(user.auth)
      .send({ url: 'https://93.184.215.14/hook', events: ['document.indexed'] })
      .expect(201);
    const refused = await test
      .http()
      .patch(`/v1/webhooks/${created.body.id}/`)
      .set(user.auth)
      .send({ url: 'https://[fd00:ec2::254]/' })
      .expect(400);
    expect(refused.body.detail).toBe('url: Must not point to a loopback, private, link-local or metadata address.');
    const kept = await test.http().get(`/v1/webhooks/${created.body.id}/`).set(user.auth).expect(200);
    expect(kept.body.url).toBe('https://93.184.215.14/hook');
    await test.http().delete(`/v1/webhooks/${created.body.id}/`).set(user.auth).expect(204);
  });
});

describe('two instances on one database', () => {
  it('deliver a backlog once each', async () => {
    const seen = new Map<string, number>();
    const receiver = await startReceiver((_path, response) => {
      setTimeout(() => response.writeHead(200).end('ok'), 5);
    });
    // A timeout no stall of a busy machine reaches: a delivery timed out after its receiver had it would
    // be sent again, and this test counts each one's arrivals.
    const patient = { ...FAST, WEBHOOK_TIMEOUT_MS: '10000' };
    const first = await startTestApp({ ...patient, WEBHOOK_DELIVERY_CONCURRENCY: '0' });
    try {
      const owner = await signUp(first);
      const endpoint = (
        await first
          .http()
          .post('/v1/webhooks/')
          .set(owner.auth)
          .send({ url: receiver.url('/backlog'), events: ['document.indexed'] })
          .expect(201)
      ).body;
      // A backlog of 300 events while no instance delivers.
      await first.db.query(
        `SELECT webhook_record_event(organization_id, 'document.indexed', jsonb_build_object('n', n))
           FROM webhook_endpoints, generate_series(1, 300) n WHERE id = $1`,
        [endpoint.id],
      );
      const [a, b] = await Promise.all([
        startTestApp({ ...patient, WEBHOOK_DELIVERY_CONCURRENCY: '8' }, first.database),
        startTestApp({ ...patient, WEBHOOK_DELIVERY_CONCURRENCY: '8' }, first.database),
      ]);
      try {
        await until(() => receiver.received.length >= 300, 60_000);
        // Each delivery recorded once its receiver answered (a busy database may take a moment), and
        // half a second more for a second sending of any of them to arrive.
        await until(async () => {
          const { rows } = await first.db.query(
            `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`,
          );
          return rows[0].n >= 300;
        }, 10_000);
        await sleep(500);
        for (const request of receiver.received)
          seen.set(request.headers['webhook-id'], (seen.get(request.headers['webhook-id']) ?? 0) + 1);
        expect(seen.size).toBe(300);
        expect([...seen.values()].every((count) => count === 1)).toBe(true);
        const { rows } = await first.db.query(
          `SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`,
        );
        expect(rows).toEqual([{ status: 'delivered', n: 300 }]);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    } finally {
      await first.close();
      await receiver.close();
    }
  }, 90_000);

  it('a worker that dies mid-send loses nothing: its lease ends and another instance delivers, once', async () => {
    const receiver = await startReceiver((_path, response) => response.writeHead(200).end('ok'));
    const producer = await startTestApp({ ...FAST, WEBHOOK_DELIVERY_CONCURRENCY: '0' });
    try {
      const owner = await signUp(producer);
      await producer
        .http()
        .post('/v1/webhooks/')
        .set(owner.auth)
        .send({ url: receiver.url('/lease'), events: ['api_key.created'] })
        .expect(201);
      await createKey(producer, owner);
      // A worker claims it (a 300 ms lease here) and dies before sending.
      const { DeliveryQueue } = await import('../../src/webhooks/delivery-queue.js');
      const claimed = await producer.app.get(DeliveryQueue).claim(10, 300);
      expect(claimed).toHaveLength(1);
      const survivor = await startTestApp({ ...FAST }, producer.database);
      try {
        await until(() => receiver.received.length >= 1);
        await sleep(300);
        expect(receiver.received).toHaveLength(1);
        const { rows } = await producer.db.query('SELECT status, attempts FROM webhook_deliveries');
        // The dead worker's attempt counts: the survivor's is the second.
        expect(rows).toEqual([{ status: 'delivered', attempts: 2 }]);
      } finally {
        await survivor.close();
      }
    } finally {
      await producer.close();
      await receiver.close();
    }
  });
});
