import { ConfigError, configWarnings, loadConfig } from '../../src/config/env.schema.js';

const STRONG_SECRET = 's'.repeat(32);

/** The message loadConfig refuses `env` with; fails the test when it accepts it. */
function refusal(env: Record<string, string | undefined>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

const DB = 'postgres://kqs@db.internal:5432/kqs';

describe('configuration', () => {
  it('applies the documented defaults to an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      DATA_DIR: './data',
      JWT_ACCESS_TTL_SECONDS: 1800,
      JWT_REFRESH_TTL_SECONDS: 2_592_000,
      ALLOW_SIGNUP: true,
      DEFAULT_MONTHLY_CREDITS: 1000,
      QUERY_CREDIT_COST: 1,
      RATE_LIMIT_PER_MINUTE: 1200,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.JWT_SECRET).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
  });

  it('applies the hardening defaults: per-address limits, two hashes at once, no rotation, no promotion', () => {
    expect(loadConfig({})).toMatchObject({
      SIGNUP_LIMIT_PER_HOUR: 30,
      SIGNIN_LIMIT_PER_MINUTE: 60,
      TOKEN_LIMIT_PER_MINUTE: 300,
      FAILED_AUTH_LIMIT_PER_MINUTE: 60,
      PASSWORD_HASH_CONCURRENCY: 2,
      JWT_ROTATE_REFRESH_TOKENS: false,
      ADMIN_PROMOTE_EXISTING: false,
    });
  });

  it('bounds metadata and each organization’s searches by default, and refuses values out of range', () => {
    expect(loadConfig({})).toMatchObject({
      DOCUMENT_METADATA_MAX_BYTES: 8192,
      SEARCHES_AT_ONCE: 2,
      SEARCHES_PER_ORGANIZATION: 5,
      SEARCH_QUEUE_PER_ORGANIZATION: 1000,
      SEARCH_TURN_SHARE_PERCENT: 20,
      SEARCH_REST_ALLOWANCE_MS: 250,
    });
    expect(
      loadConfig({
        DOCUMENT_METADATA_MAX_BYTES: '4096',
        SEARCHES_AT_ONCE: '8',
        SEARCHES_PER_ORGANIZATION: '1',
        SEARCH_QUEUE_PER_ORGANIZATION: '0',
        SEARCH_REST_ALLOWANCE_MS: '0',
      }),
    ).toMatchObject({
      DOCUMENT_METADATA_MAX_BYTES: 4096,
      SEARCHES_AT_ONCE: 8,
      SEARCHES_PER_ORGANIZATION: 1,
      SEARCH_QUEUE_PER_ORGANIZATION: 0,
      SEARCH_REST_ALLOWANCE_MS: 0,
    });
    for (const [name, value] of [
      ['DOCUMENT_METADATA_MAX_BYTES', '100'],
      ['SEARCHES_AT_ONCE', '0'],
      ['SEARCHES_PER_ORGANIZATION', '0'],
      ['SEARCH_QUEUE_PER_ORGANIZATION', '-1'],
      ['SEARCH_REST_ALLOWANCE_MS', '-1'],
      ['SEARCH_REST_ALLOWANCE_MS', '501'],
    ])
      expect(refusal({ [name]: value })).toMatch(new RegExp(`\\b${name}\\b`));
  });

  it('reads every documented variable, typed', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://user:pw@db.internal:5432/kqs',
      DATA_DIR: '/var/lib/kqs',
      JWT_SECRET: STRONG_SECRET,
      JWT_ACCESS_TTL_SECONDS: '600',
      JWT_REFRESH_TTL_SECONDS: '86400',
      ADMIN_EMAIL: 'root@example.com',
      ADMIN_PASSWORD: 'admin password',
      ALLOW_SIGNUP: 'false',
      DEFAULT_MONTHLY_CREDITS: '50',
      QUERY_CREDIT_COST: '2',
      RATE_LIMIT_PER_MINUTE: '60',
      REDIS_URL: 'redis://cache:6379',
    });
    expect(config).toMatchObject({
      PORT: 8080,
      DATABASE_URL: 'postgres://user:pw@db.internal:5432/kqs',
      DATA_DIR: '/var/lib/kqs',
      JWT_SECRET: STRONG_SECRET,
      JWT_ACCESS_TTL_SECONDS: 600,
      JWT_REFRESH_TTL_SECONDS: 86400,
      ADMIN_EMAIL: 'root@example.com',
      ADMIN_PASSWORD: 'admin password',
      ALLOW_SIGNUP: false,
      DEFAULT_MONTHLY_CREDITS: 50,
      QUERY_CREDIT_COST: 2,
      RATE_LIMIT_PER_MINUTE: 60,
      REDIS_URL: 'redis://cache:6379',
    });
  });

  it.each(['true', 'TRUE', '1', 'yes'])('reads ALLOW_SIGNUP=%s as true', (value) => {
    expect(loadConfig({ ALLOW_SIGNUP: value }).ALLOW_SIGNUP).toBe(true);
  });

  it.each(['false', 'False', '0', 'no'])('reads ALLOW_SIGNUP=%s as false', (value) => {
    expect(loadConfig({ ALLOW_SIGNUP: value }).ALLOW_SIGNUP).toBe(false);
  });

  it('treats an empty optional variable as unset', () => {
    const config = loadConfig({ DATABASE_URL: '', JWT_SECRET: '', REDIS_URL: '' });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.JWT_SECRET).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
  });

  it('ignores variables it does not know', () => {
    expect(() => loadConfig({ HOME: '/root', PATH: '/usr/bin', SOMETHING_ELSE: 'x' })).not.toThrow();
  });

  it('returns a frozen object', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['METRICS_PORT', '70000'],
    ['METRICS_PORT', 'metrics'],
    ['DATABASE_URL', 'mysql://db/kqs'],
    ['DATABASE_URL', 'not a url'],
    ['JWT_ACCESS_TTL_SECONDS', '0'],
    ['JWT_ACCESS_TTL_SECONDS', '-1'],
    ['JWT_ACCESS_TTL_SECONDS', 'abc'],
    ['JWT_ACCESS_TTL_SECONDS', 'thirty minutes'],
    ['JWT_REFRESH_TTL_SECONDS', '0'],
    ['JWT_REFRESH_TTL_SECONDS', '-1'],
    ['JWT_REFRESH_TTL_SECONDS', 'abc'],
    ['CORS_ORIGINS', '*'],
    ['CORS_ORIGINS', 'https://app.example.com,*'],
    ['CORS_ORIGINS', 'https://app.example.com/'],
    ['CORS_ORIGINS', 'https://app.example.com/dashboard'],
    ['CORS_ORIGINS', 'app.example.com'],
    ['CORS_ORIGINS', 'ftp://files.example.com'],
    ['CORS_ORIGINS', 'https://*.example.com'],
    ['ADMIN_EMAIL', 'not-an-email'],
    ['ADMIN_PASSWORD', 'short'],
    ['ALLOW_SIGNUP', 'maybe'],
    ['DEFAULT_MONTHLY_CREDITS', '-5'],
    ['DEFAULT_MONTHLY_CREDITS', 'lots'],
    ['QUERY_CREDIT_COST', '1.5'],
    ['RATE_LIMIT_PER_MINUTE', '0'],
    ['SIGNUP_LIMIT_PER_HOUR', '0'],
    ['SIGNIN_LIMIT_PER_MINUTE', 'many'],
    ['TOKEN_LIMIT_PER_MINUTE', '-1'],
    ['FAILED_AUTH_LIMIT_PER_MINUTE', '2.5'],
    ['PASSWORD_HASH_CONCURRENCY', '0'],
    ['PASSWORD_HASH_CONCURRENCY', '65'],
    ['JWT_ROTATE_REFRESH_TOKENS', 'sometimes'],
    ['ADMIN_PROMOTE_EXISTING', 'perhaps'],
    ['REDIS_URL', 'http://cache:6379'],
    ['NODE_ENV', 'staging'],
    ['DATA_DIR', ''],
  ])('stops the boot on %s=%j, naming the variable', (name, value) => {
    const env: Record<string, string> = { [name]: value };
    // An admin e-mail needs its password and vice versa; give the partner so only the bad value is wrong.
    if (name === 'ADMIN_EMAIL') env.ADMIN_PASSWORD = 'long enough password';
    if (name === 'ADMIN_PASSWORD') env.ADMIN_EMAIL = 'root@example.com';
    const message = refusal(env);
    expect(message).toMatch(new RegExp(`\\b${name}\\b`));
    // Only the bad variable is blamed.
    const blamed = message.match(/\b[A-Z][A-Z_]{2,}\b(?=:)/g);
    expect(blamed).toEqual([name]);
  });

  it('accepts short token lifetimes (any positive number of seconds) and warns below a minute', () => {
    const config = loadConfig({ JWT_ACCESS_TTL_SECONDS: '4', JWT_REFRESH_TTL_SECONDS: '8' });
    expect([config.JWT_ACCESS_TTL_SECONDS, config.JWT_REFRESH_TTL_SECONDS]).toEqual([4, 8]);
    expect(configWarnings(config)).toEqual([
      expect.stringMatching(/^JWT_ACCESS_TTL_SECONDS=4: /),
      expect.stringMatching(/^JWT_REFRESH_TTL_SECONDS=8: /),
    ]);
    expect(configWarnings(loadConfig({}))).toEqual([]);
  });

  it('reads CORS_ORIGINS as a list of exact origins, empty by default', () => {
    expect(loadConfig({}).CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: '' }).CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: ' https://app.example.com , http://localhost:5173 ' }).CORS_ORIGINS).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
  });

  it('names the origin it refuses in CORS_ORIGINS', () => {
    expect(refusal({ CORS_ORIGINS: 'https://ok.example.com,https://bad.example.com/path' })).toContain(
      '"https://bad.example.com/path" is not one',
    );
  });

  it('names every bad variable at once', () => {
    const message = refusal({ PORT: 'x', ALLOW_SIGNUP: 'perhaps', REDIS_URL: 'ftp://x' });
    for (const name of ['PORT', 'ALLOW_SIGNUP', 'REDIS_URL']) expect(message).toContain(name);
  });

  it('never echoes a secret value in its refusal', () => {
    const message = refusal({ NODE_ENV: 'production', JWT_SECRET: 'hunter2-short-secret' });
    expect(message).not.toContain('hunter2');
  });

  it('accepts an administrator only as a pair: ADMIN_EMAIL without ADMIN_PASSWORD stops the boot', () => {
    expect(refusal({ ADMIN_EMAIL: 'root@example.com' })).toMatch(/\bADMIN_PASSWORD\b/);
    expect(refusal({ ADMIN_PASSWORD: 'long enough password' })).toMatch(/\bADMIN_EMAIL\b/);
  });

  it('serves metrics on a port of their own only when it is not the API port', () => {
    expect(loadConfig({ METRICS_PORT: '9464' }).METRICS_PORT).toBe(9464);
    expect(loadConfig({}).METRICS_PORT).toBeUndefined();
    expect(refusal({ PORT: '8080', METRICS_PORT: '8080' })).toBe(
      'Invalid configuration: METRICS_PORT: must differ from PORT',
    );
  });

  describe('NODE_ENV=production', () => {
    it('refuses to start without JWT_SECRET, naming it', () => {
      expect(refusal({ NODE_ENV: 'production' })).toMatch(/\bJWT_SECRET\b.*32 bytes/);
    });

    it('refuses to start without DATABASE_URL, naming it, unless EMBEDDED_STORE_IN_PRODUCTION=true', () => {
      expect(refusal({ NODE_ENV: 'production', JWT_SECRET: STRONG_SECRET })).toMatch(
        /^Invalid configuration: DATABASE_URL: must be set when NODE_ENV=production/,
      );
      const embedded = loadConfig({
        NODE_ENV: 'production',
        JWT_SECRET: STRONG_SECRET,
        EMBEDDED_STORE_IN_PRODUCTION: 'true',
      });
      expect([embedded.DATABASE_URL, embedded.EMBEDDED_STORE_IN_PRODUCTION]).toEqual([undefined, true]);
      expect(
        refusal({ NODE_ENV: 'production', JWT_SECRET: STRONG_SECRET, EMBEDDED_STORE_IN_PRODUCTION: 'maybe' }),
      ).toMatch(/\bEMBEDDED_STORE_IN_PRODUCTION\b/);
    });

    it('refuses a JWT_SECRET of 31 bytes', () => {
      expect(refusal({ NODE_ENV: 'production', JWT_SECRET: 's'.repeat(31) })).toMatch(/\bJWT_SECRET\b/);
    });

    it('counts bytes, not characters: 11 three-byte characters (33 bytes) are enough, 10 (30 bytes) are not', () => {
      expect(loadConfig({ NODE_ENV: 'production', DATABASE_URL: DB, JWT_SECRET: '€'.repeat(11) }).JWT_SECRET).toBe(
        '€'.repeat(11),
      );
      expect(refusal({ NODE_ENV: 'production', JWT_SECRET: '€'.repeat(10) })).toMatch(/\bJWT_SECRET\b/);
    });

    it('starts with a JWT_SECRET of 32 bytes', () => {
      expect(loadConfig({ NODE_ENV: 'production', DATABASE_URL: DB, JWT_SECRET: STRONG_SECRET }).NODE_ENV).toBe(
        'production',
      );
    });
  });

  it('does not require JWT_SECRET outside production', () => {
    expect(() => loadConfig({ NODE_ENV: 'development' })).not.toThrow();
    expect(() => loadConfig({ NODE_ENV: 'test' })).not.toThrow();
  });
});
