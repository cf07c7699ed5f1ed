import { DataSource } from 'typeorm';
import { startTestApp, type TestApp } from '../support/app.js';

describe('health', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp();
  });
  afterAll(() => test.close());

  it('reports liveness with an offset timestamp and no credentials', async () => {
    const response = await test.http().get('/health/').expect(200);
    expect(response.body).toEqual({
      status: 'ok',
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/),
    });
    expect(Math.abs(Date.parse(response.body.timestamp) - Date.now())).toBeLessThan(5_000);
  });

  it('answers without the trailing slash too', async () => {
    await test.http().get('/health').expect(200);
  });

  it('reports readiness when the database answers', async () => {
    const response = await test.http().get('/health/ready/').expect(200);
    expect(response.body.status).toBe('ok');
  });

  it('stays ready while every connection of the main pool is busy (readiness has its own connection)', async () => {
    const busy = await startTestApp({ DATABASE_POOL_SIZE: '1' });
    try {
      const slowStatement = busy.app.get(DataSource).query('SELECT pg_sleep(3)');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      const response = await busy.http().get('/health/ready/');
      expect({ status: response.status, body: response.body.status }).toEqual({ status: 200, body: 'ok' });
      expect(Date.now() - started).toBeLessThan(1_000);
      await slowStatement;
    } finally {
      await busy.close();
    }
  });
});
