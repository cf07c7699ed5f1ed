import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/env.schema.js';

describe('webhooks on the embedded store (no DATABASE_URL)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kqs-embedded-hooks-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('records the event in the change’s transaction and delivers it with the same queue code', async () => {
    const received: { headers: Record<string, string>; body: string }[] = [];
    const receiver = http.createServer((incoming, response) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        received.push({ headers: incoming.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    });
    expect(config.DATABASE_URL).toBeUndefined();
    const app = await createApp(config, { logger: false });
    await app.listen(0, '127.0.0.1');
    const http_ = () => request(app.getHttpServer() as Server);
    try {
      const user = { email: 'hooks@example.com', password: 'embedded password' };
      await http_().post('/auth/users/').send(user).expect(201);
      const access = (await http_().post('/auth/jwt/create/').send(user).expect(200)).body.access;
      const auth = { Authorization: `Bearer ${access}` };
      const endpoint = (
        await http_()
          .post('/v1/webhooks/')
          .set(auth)
          .send({
            url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`,
            events: ['document.indexed', 'document.failed'],
          })
          .expect(201)
      ).body;
      const document = (
        await http_().post('/v1/documents/').set(auth).send({ title: 'Embedded', content: 'Stored here.' }).expect(201)
      ).body;
      const deadline = Date.now() + 5000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(received).toHaveLength(1);
      const body = new Webhook(endpoint.secret).verify(received[0].body, received[0].headers) as {
        type: string;
        data: { document_id: string };
      };
      expect(body).toMatchObject({ type: 'document.indexed', data: { document_id: document.id } });

      // An upload that cannot be read: the same database function records its document.failed.
      await http_().post('/v1/documents/').set(auth).attach('file', Buffer.from('<p> </p>'), 'empty.html').expect(400);
      while (received.length === 1 && Date.now() < deadline + 5000)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(received).toHaveLength(2);
      expect(new Webhook(endpoint.secret).verify(received[1].body, received[1].headers)).toMatchObject({
        type: 'document.failed',
        data: { document_id: null, title: 'empty.html', reason: 'The file contains no text.' },
      });
    } finally {
      await app.close();
      receiver.close();
    }
  }, 120_000);
});
