import { startTestApp, type TestApp } from './support/app.js';

describe('health', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp();
  });
  afterAll(() => test.close());

  it('reports liveness with an offset timestamp and no credentials', async () => {
    const response = await test.http().get('/health/').expect(200);
    expect(response.body).toEqual({ status: 'ok', timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/) });
    expect(Math.abs(Date.parse(response.body.timestamp) - Date.now())).toBeLessThan(5_000);
  });

  it('answers without the trailing slash too', async () => {
    await test.http().get('/health').expect(200);
  });

  it('reports readiness when the database answers', async () => {
    const response = await test.http().get('/health/ready/').expect(200);
    expect(response.body.status).toBe('ok');
  });
});
