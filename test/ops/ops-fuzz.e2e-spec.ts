import { ADMIN, createKey, signIn, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { databaseFingerprint, registeredRoutes, type RegisteredRoute } from '../support/ops.js';

/**
 * Every JSON endpoint the app registers (found at run time, so new ones are covered without
 * editing this file) gets generated bodies: wrong types, huge strings, deep nesting, unicode
 * oddities, prototype-pollution keys. None may answer 500, an error must have a `detail` string, a
 * refused request must leave the database exactly as it was, and Object.prototype stays clean.
 */

// Field names the contract uses; every generated object body sets all of them to the same value.
const FIELDS = [
  'name',
  'email',
  'password',
  'refresh',
  'token',
  'expires_at',
  'grace_period_seconds',
  'title',
  'content',
  'metadata',
  'query',
  'domain',
  'top_k',
  'stream',
  'slug',
  'description',
  'region',
  'is_active',
  'allowed_domains',
  'monthly_credits',
  'limit',
  'offset',
  'key',
  'file',
];

function nested(depth: number, leaf: unknown = 1): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

const VALUES: [string, unknown][] = [
  ['null', null],
  ['a number', 42],
  ['a negative float', -1.5e308],
  ['NaN-ish huge int', 1e308],
  ['a boolean', true],
  ['an empty string', ''],
  ['blanks', ' \t\n '],
  ['an array', ['a', 1, null]],
  ['an object', { nested: 'x' }],
  ['a 100 000-character string', 'x'.repeat(100_000)],
  ['a 300-deep nesting', nested(300)],
  ['a NUL character', 'a\u0000b'],
  ['a lone surrogate', 'a\ud800b'],
  ['emoji and combining marks', 'é😀\u0301\u200d👩‍👩‍👧'],
  ['right-to-left text', '\u202eevil\u202c مرحبا'],
  ['SQL', "'; DROP TABLE users; --"],
  ['a timestamp far away', '99999-12-31T23:59:59Z'],
  ['a date without zone', '2030-01-01T00:00:00'],
  ['an uuid', '00000000-0000-0000-0000-000000000000'],
  ['HTML', '<script>alert(1)</script>'],
];

/** Raw bodies: what is sent as-is with Content-Type: application/json. */
const RAW: [string, string][] = [
  ['no body at all', ''],
  ['malformed JSON', '{"name": '],
  ['a JSON string', '"just a string"'],
  ['a JSON number', '12345'],
  ['a JSON array', '[1, 2, 3]'],
  ['JSON null', 'null'],
  ['10 000-deep arrays', '['.repeat(10_000) + ']'.repeat(10_000)],
  [
    '__proto__ pollution',
    JSON.stringify({ name: 'p' }).replace('{', '{"__proto__": {"polluted": "yes", "isAdmin": true, "is_admin": true},'),
  ],
  ['constructor.prototype pollution', '{"constructor": {"prototype": {"polluted": "yes"}}, "name": "c"}'],
  ['duplicate keys', '{"name": "a", "name": {"__proto__": {"polluted": "yes"}}}'],
  ['a body over the size limit', JSON.stringify({ name: 'x'.repeat(1_100_000) })],
  // Plausible bodies with one poisoned value inside a nested object (metadata is stored as jsonb).
  [
    'a NUL inside metadata',
    JSON.stringify({ name: 'n', title: 't', content: 'c', query: 'q', metadata: { k: 'a\u0000b', 'a\u0000': 1 } }),
  ],
  ['a lone surrogate inside metadata', JSON.stringify({ title: 't', content: 'c', metadata: { k: 'a\ud800' } })],
  ['metadata nested too deep', JSON.stringify({ title: 't', content: 'c', metadata: { k: nested(50) } })],
  ['a huge number inside metadata', '{"title": "t", "content": "c", "metadata": {"k": 1e400}}'],
];

function bodiesFor(): [string, string][] {
  const bodies: [string, string][] = [...RAW];
  for (const [label, value] of VALUES)
    bodies.push([`every field ${label}`, JSON.stringify(Object.fromEntries(FIELDS.map((field) => [field, value])))]);
  for (const [label, value] of VALUES.slice(0, 10)) {
    bodies.push([
      `__proto__ plus every field ${label}`,
      `{"__proto__": {"polluted": "yes"}, ${JSON.stringify(Object.fromEntries(FIELDS.map((f) => [f, value]))).slice(1)}`,
    ]);
  }
  return bodies;
}

const QUERIES = [
  '?limit=abc&offset=-1',
  '?limit=99999999999999999999&offset=1e309',
  '?limit[]=1&offset[a]=2',
  '?limit=%00&offset=%F0%9F',
  `?q=${'x'.repeat(5000)}`,
];

describe('fuzzing every JSON endpoint', () => {
  let test: TestApp;
  let alice: SignedInUser;
  let admin: SignedInUser;
  const params: Record<string, string> = {};
  const failures: string[] = [];

  beforeAll(async () => {
    test = await startTestApp({
      RATE_LIMIT_PER_MINUTE: '10000000',
      ORG_RATE_LIMIT_PER_MINUTE: '10000000',
      LOG_LEVEL: 'silent',
    });
    alice = await signUp(test);
    admin = await signIn(test, ADMIN.email, ADMIN.password);
    // Real ids for path parameters, so bodies reach the code behind the 404s. A step whose endpoint
    // changed shape only leaves that parameter to a random UUID.
    const me = await test.http().get('/auth/users/me/').set(alice.auth);
    params.organizationId = me.body.organization_id;
    params.keyId = (await createKey(test, alice, 'fuzzed')).id;
    const tries: [
      string,
      () => Promise<{ status: number; body: Record<string, string> }>,
      (body: Record<string, string>) => void,
    ][] = [
      [
        'region',
        () => test.http().post('/v1/regions/').set(admin.auth).send({ name: 'Fuzz region', slug: 'fuzz-region' }),
        (b) => (params.regionSlug = b.slug),
      ],
      [
        'domain',
        () => test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Fuzz domain', slug: 'fuzz-domain' }),
        (b) => (params.slug = b.slug),
      ],
      [
        'document',
        () =>
          test
            .http()
            .post('/v1/documents/')
            .set(alice.auth)
            .send({ title: 'Doc', content: 'Some content about fuzzing.' }),
        (b) => (params.id = b.id),
      ],
      [
        'session',
        () => test.http().post('/v1/chat/sessions/').set(alice.auth).send({ title: 'Chat' }),
        (b) => (params.sessionId = b.id),
      ],
    ];
    for (const [, send, keep] of tries) {
      const response = await send().catch(() => null);
      if (response && response.status < 300) keep(response.body);
    }
    if (params.slug) {
      const document = await test
        .http()
        .post(`/v1/domains/${params.slug}/documents/`)
        .set(admin.auth)
        .send({ title: 'Public', content: 'Public text.' });
      if (document.status < 300) params.domainDocumentId = document.body.id;
    }
  }, 60_000);
  afterAll(() => test.close());

  function pathFor(route: RegisteredRoute): string {
    return (
      route.path.replace(/:(\w+)/g, (_, name: string) => {
        if (name === 'slug' && route.path.startsWith('/v1/regions')) return params.regionSlug ?? 'no-such-region';
        if (name === 'id' && route.path.startsWith('/v1/domains'))
          return params.domainDocumentId ?? crypto.randomUUID();
        return params[name] ?? crypto.randomUUID();
      }) + '/'
    );
  }

  async function check(label: string, send: () => Promise<{ status: number; body: unknown; text: string }>) {
    const before = await databaseFingerprint(test.db);
    const response = await send();
    const problem = (why: string) =>
      failures.push(`${label}: ${why} (status ${response.status}, body ${response.text.slice(0, 200)})`);
    if (response.status >= 500) problem('server error');
    // MCP's transport answers its own refusals in JSON-RPC's error shape, which MCP clients read: its
    // message names the problem. What the pipeline refuses before it (body size, depth, JSON) has `detail`.
    const body = response.body as { detail?: unknown; error?: { message?: unknown } } | undefined;
    const detail = body?.detail ?? (label.startsWith('POST /mcp') ? body?.error?.message : undefined);
    if (response.status >= 400 && typeof detail !== 'string') problem('error without a detail string');
    if (response.status >= 400 && (await databaseFingerprint(test.db)) !== before)
      problem('a refused request changed stored data');
    if (
      (Object.prototype as Record<string, unknown>).polluted !== undefined ||
      ({} as Record<string, unknown>).isAdmin !== undefined
    ) {
      problem('Object.prototype polluted');
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  }

  it('finds the routes to fuzz', () => {
    const routes = registeredRoutes(test.app);
    expect(routes.filter((route) => ['POST', 'PATCH', 'PUT'].includes(route.method)).length).toBeGreaterThanOrEqual(10);
  });

  it('never answers 500 nor changes data on a refused body, for every body-taking route and caller', async () => {
    const routes = registeredRoutes(test.app).filter((route) => ['POST', 'PATCH', 'PUT'].includes(route.method));
    for (const route of routes) {
      for (const caller of [alice, admin]) {
        for (const [label, raw] of bodiesFor()) {
          await check(`${route.method} ${route.path} as ${caller === admin ? 'admin' : 'user'} with ${label}`, () =>
            test
              .http()
              [route.method.toLowerCase() as 'post'](pathFor(route))
              .set(caller.auth)
              .set('Content-Type', 'application/json')
              .send(raw),
          );
        }
      }
    }
    expect(failures).toEqual([]);
  }, 600_000);

  it('never answers 500 to odd query strings or an API key, on every route', async () => {
    failures.length = 0;
    const key = (await createKey(test, alice, 'query fuzz')).key;
    for (const route of registeredRoutes(test.app).filter((r) => r.method !== 'DELETE')) {
      for (const query of QUERIES) {
        await check(`${route.method} ${route.path}${query.slice(0, 40)}`, () =>
          test
            .http()
            [route.method.toLowerCase() as 'get'](pathFor(route) + query)
            .set('X-API-Key', key),
        );
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
