import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config/env.schema.js';
import { signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';

const PASSWORD = 'correct horse battery';

/** The message loadConfig (the boot's first step: main.ts exits 1 with it) refuses `env` with. */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('TRUST_PROXY at boot', () => {
  it.each(['true', 'TRUE', ' true '])('refuses %j, naming TRUST_PROXY and what to set instead', (value) => {
    const message = refusal({ TRUST_PROXY: value });
    expect(message).toContain('TRUST_PROXY: true would believe the X-Forwarded-For header of any client');
    expect(message).toContain('set the number of proxies in front of the service (e.g. 1) or their addresses/CIDRs');
  });

  it.each(['10.0.0.0/33', 'proxy.internal', '10.0.0.1, *', '1.2.3.4/8/9', '::1/129'])('refuses %j', (value) => {
    expect(refusal({ TRUST_PROXY: value })).toContain(
      'TRUST_PROXY: must be false, a number of proxy hops (e.g. 1), or a comma-separated list of proxy addresses/CIDRs',
    );
  });

  // Accepted before, trusting everyone (two /1 halves) or crashing the boot inside proxy-addr (a /0).
  it.each([
    ['0.0.0.0/1,128.0.0.0/1', '0.0.0.0/1'],
    ['loopback, 0.0.0.0/0', '0.0.0.0/0'],
    ['::/0', '::/0'],
    ['10.0.0.0/8, 8000::/1', '8000::/1'],
    ['::ffff:0.0.0.0/96', '::ffff:0.0.0.0/96'],
    ['172.16.0.0/7', '172.16.0.0/7'],
  ])('refuses %j, a range that believes most clients, naming it', (value, wide) => {
    expect(refusal({ TRUST_PROXY: value })).toContain(
      `TRUST_PROXY: ${wide} is wider than /8 (IPv4) or /7 (IPv6): it would believe the X-Forwarded-For header of most clients`,
    );
  });

  it.each([
    'false',
    '',
    '1',
    '2',
    'loopback',
    '10.0.0.0/8',
    '10.0.0.0/8, 192.168.1.10',
    'fd00::/8, loopback',
    'fc00::/7',
    '::ffff:10.0.0.0/104',
    '203.0.113.7/32',
  ])('accepts %j', (value) => {
    expect(loadConfig({ TRUST_PROXY: value }).TRUST_PROXY).toBe(value);
  });
});

describe('X-Forwarded-For from a peer that is not a trusted proxy', () => {
  let test: TestApp;
  let user: SignedInUser;
  beforeAll(async () => {
    // The tests connect from 127.0.0.1, which is not in 10.0.0.0/8: every forwarding header is forged.
    test = await startTestApp({ TRUST_PROXY: '10.0.0.0/8', SIGNUP_LIMIT_PER_HOUR: '3' });
    user = await signUp(test); // the first of the address's three sign-ups
  });
  afterAll(() => test.close());

  it('is ignored by the per-address limits: a new forged address per request does not dodge them', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const response = await test
        .http()
        .post('/auth/users/')
        .set('X-Forwarded-For', `203.0.113.${i}`)
        .send({ email: `forger-${randomBytes(6).toString('hex')}@example.com`, password: PASSWORD });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([201, 201, 429]);
  });

  it("is ignored by the audit log: the entry records the peer's own address", async () => {
    const key = await test
      .http()
      .post('/v1/billings/api-keys/')
      .set(user.auth)
      .set('X-Forwarded-For', '198.51.100.66')
      .send({ name: 'audited' })
      .expect(201);
    const { rows } = await test.db.query(`SELECT ip FROM api_key_events WHERE key_id = $1`, [key.body.id]);
    expect(rows).toEqual([{ ip: '127.0.0.1' }]);
  });
});

describe('X-Forwarded-For from a trusted proxy', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await startTestApp({ TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(() => test.close());

  it('is believed: the audit log records the client the proxy names', async () => {
    const user = await signUp(test);
    const key = await test
      .http()
      .post('/v1/billings/api-keys/')
      .set(user.auth)
      .set('X-Forwarded-For', '198.51.100.66')
      .send({ name: 'audited' })
      .expect(201);
    const { rows } = await test.db.query(`SELECT ip FROM api_key_events WHERE key_id = $1`, [key.body.id]);
    expect(rows).toEqual([{ ip: '198.51.100.66' }]);
  });
});
