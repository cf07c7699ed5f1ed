import { connect, type Socket } from 'node:net';
import { TEST_JWT_SECRET } from '../support/app.js';
import { buildService, type RunningService, startBuiltService } from '../support/built-service.js';
import { until } from '../support/core.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const json = { 'Content-Type': 'application/json' };

/** A request whose body is only half sent: in flight until `finish()` sends the rest. */
function halfSentRequest(port: number, path: string, body: object) {
  const payload = JSON.stringify(body);
  const socket: Socket = connect(port, '127.0.0.1');
  let response = '';
  socket.on('data', (chunk) => (response += chunk.toString()));
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(response)));
  socket.on('error', (error) => (response += `[socket error: ${error.message}]`));
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n`,
  );
  socket.write(payload.slice(0, 5));
  return {
    // write, not end: a half-closed request is one the client gave up on.
    finish: () => socket.write(payload.slice(5)),
    closed,
  };
}

/**
 * SIGTERM on the built service (`node dist/main.js`), as Kubernetes sends it: readiness 503 at once,
 * requests in flight finish, the process exits 0.
 */
describe('graceful shutdown on SIGTERM', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    await buildService();
    database = await createTestDatabase();
  }, 120_000);
  afterAll(() => database?.drop());

  function start(extra: Record<string, string> = {}): Promise<RunningService> {
    return startBuiltService({ DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET, LOG_LEVEL: 'info', ...extra });
  }

  it('turns readiness 503 at once, lets the request in flight finish, and exits 0', async () => {
    const service = await start({ SHUTDOWN_DELAY_MS: '1500', SHUTDOWN_GRACE_MS: '10000' });
    const credentials = { email: `shutdown-${Date.now()}@example.com`, password: 'long enough pw' };
    expect(
      (await fetch(`${service.url}/auth/users/`, { method: 'POST', headers: json, body: JSON.stringify(credentials) }))
        .status,
    ).toBe(201);

    const slow = halfSentRequest(service.port, '/auth/jwt/create/', credentials);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const signalled = Date.now();
    service.child.kill('SIGTERM');

    // At once: well within SHUTDOWN_DELAY_MS, however late a busy machine delivers the signal.
    const ready = await until(async () => {
      const response = await fetch(`${service.url}/health/ready/`);
      if (response.status === 503) return response;
      await response.body?.cancel();
      return false;
    }, 1000);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'error',
      detail: 'The service is shutting down.',
      timestamp: expect.any(String),
    });
    const live = await fetch(`${service.url}/health/`);
    expect(live.status).toBe(200);
    expect(live.headers.get('connection')).toBe('close');

    // Past the delay the listener is closed, but the request in flight still completes.
    await new Promise((resolve) => setTimeout(resolve, 1800));
    await expect(fetch(`${service.url}/health/`)).rejects.toThrow();
    slow.finish();
    const raw = await slow.closed;
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw).toContain('"access"');

    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(8_000);
    expect(service.output()).toContain('closed cleanly');
  }, 60_000);

  it('exits 0 after the grace period even when a request never finishes', async () => {
    const service = await start({ SHUTDOWN_DELAY_MS: '0', SHUTDOWN_GRACE_MS: '1000' });
    const stuck = halfSentRequest(service.port, '/auth/jwt/create/', {
      email: 'stuck@example.com',
      password: 'whatever pw',
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const signalled = Date.now();
    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    const took = Date.now() - signalled;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(6_000);
    expect(service.output()).toMatch(/grace period of 1000 ms over; 1 request\(s\) cut off/);
    await stuck.closed;
  }, 60_000);

  it('exits 0 at once when nothing is in flight', async () => {
    const service = await start();
    const signalled = Date.now();
    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(3_000);
  }, 60_000);
});
