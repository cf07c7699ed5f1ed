import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { migrations } from '../../src/database/migrations/index.js';
import { ADMIN, signIn, signUp, startTestApp, TEST_JWT_SECRET, type TestApp } from '../support/app.js';
import { BAD_CREDENTIALS } from '../support/core.js';
import { connect, createTestDatabase, type TestDatabase } from '../support/database.js';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command of the built service with exactly `env` (plus PATH and HOME), as an operator would. */
async function runBuilt(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeout = 90_000,
): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(command, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      timeout,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failure.code === 'number' ? failure.code : -1,
      stdout: failure.stdout ?? '',
      stderr: failure.stderr ?? '',
    };
  }
}

const cli = (args: string[], env: Record<string, string>) => runBuilt(process.execPath, ['dist/cli.js', ...args], env);
const migrate = (env: Record<string, string>) => runBuilt(process.execPath, ['dist/database/migrate.js'], env);
const migrationNames = migrations.map((migration) => new migration().name);

function expectNoPassword(outcome: Outcome, password: string): void {
  expect(outcome.stdout).not.toContain(password);
  expect(outcome.stderr).not.toContain(password);
}

beforeAll(async () => {
  // The CLI and the migration command run from the build, as `npm run cli` and `npm run migration:run` do.
  await run('npm', ['run', 'build', '--silent'], { cwd: ROOT, timeout: 180_000 });
}, 200_000);

describe('the administrator from ADMIN_EMAIL / ADMIN_PASSWORD', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('exists after the first boot, as an administrator with its own organization', async () => {
    const test = await startTestApp({}, database);
    try {
      const admin = await signIn(test, ADMIN.email, ADMIN.password);
      const me = await test.http().get('/auth/users/me/').set(admin.auth).expect(200);
      expect(me.body).toMatchObject({ email: ADMIN.email, is_admin: true, organization_id: expect.any(String) });
      const { rows } = await test.db.query('SELECT count(*)::int AS n FROM users WHERE email = $1', [ADMIN.email]);
      expect(rows[0].n).toBe(1);
    } finally {
      await test.close();
    }
  });

  it('is ensured at every boot: a changed ADMIN_PASSWORD replaces the old one, still one account', async () => {
    const test = await startTestApp({ ADMIN_PASSWORD: 'a brand new admin password' }, database);
    try {
      const old = await test.http().post('/auth/jwt/create/').send(ADMIN).expect(401);
      expect(old.body).toEqual(BAD_CREDENTIALS);
      await signIn(test, ADMIN.email, 'a brand new admin password');
      const { rows } = await test.db.query('SELECT count(*)::int AS n FROM users WHERE email = $1', [ADMIN.email]);
      expect(rows[0].n).toBe(1);
    } finally {
      await test.close();
    }
  });

  it('does not promote an existing ordinary account named by ADMIN_EMAIL, unless ADMIN_PROMOTE_EXISTING=true', async () => {
    const test = await startTestApp({}, database);
    let ordinary: Awaited<ReturnType<typeof signUp>>;
    try {
      ordinary = await signUp(test);
      expect((await test.http().get('/auth/users/me/').set(ordinary.auth).expect(200)).body.is_admin).toBe(false);
    } finally {
      await test.close();
    }
    const refused = await startTestApp(
      { ADMIN_EMAIL: ordinary!.email, ADMIN_PASSWORD: 'promoted admin password' },
      database,
    );
    try {
      await refused
        .http()
        .post('/auth/jwt/create/')
        .send({ email: ordinary!.email, password: 'promoted admin password' })
        .expect(401);
      expect((await refused.http().get('/auth/users/me/').set(ordinary!.auth).expect(200)).body.is_admin).toBe(false);
    } finally {
      await refused.close();
    }
    const again = await startTestApp(
      { ADMIN_EMAIL: ordinary!.email, ADMIN_PASSWORD: 'promoted admin password', ADMIN_PROMOTE_EXISTING: 'true' },
      database,
    );
    try {
      // Its earlier sessions ended with the promotion.
      await again.http().post('/auth/jwt/refresh/').send({ refresh: ordinary!.refresh }).expect(401);
      const promoted = await signIn(again, ordinary!.email, 'promoted admin password');
      expect((await again.http().get('/auth/users/me/').set(promoted.auth).expect(200)).body.is_admin).toBe(true);
    } finally {
      await again.close();
    }
  });
});

describe('npm run cli -- create-admin', () => {
  let database: TestDatabase;
  const password = 'cli secret password 7';

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('migrates a fresh database, creates the administrator, exits 0, and never prints the password', async () => {
    const outcome = await cli(['create-admin', '--email', 'Ops@Example.com', '--password', password], {
      DATABASE_URL: database.url,
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('Created administrator ops@example.com');
    expectNoPassword(outcome, password);

    const db = await connect(database.url);
    try {
      const applied = await db.query('SELECT name FROM migrations ORDER BY timestamp');
      expect(applied.rows.map((row: { name: string }) => row.name)).toEqual(migrationNames);
      const users = await db.query('SELECT email, is_admin, password_hash, organization_id FROM users');
      expect(users.rows).toEqual([
        {
          email: 'ops@example.com',
          is_admin: true,
          password_hash: expect.stringMatching(/^\$argon2id\$/),
          organization_id: expect.any(String),
        },
      ]);
    } finally {
      await db.end();
    }

    const test = await startTestApp({ ADMIN_EMAIL: '', ADMIN_PASSWORD: '' }, database);
    try {
      const admin = await signIn(test, 'ops@example.com', password);
      expect((await test.http().get('/auth/users/me/').set(admin.auth).expect(200)).body.is_admin).toBe(true);
    } finally {
      await test.close();
    }
  });

  it('refuses to promote an existing ordinary account without --promote-existing: exit 1, nothing changed', async () => {
    const test = await startTestApp({ ADMIN_EMAIL: '', ADMIN_PASSWORD: '' }, database);
    try {
      const user = await signUp(test);
      const outcome = await cli(['create-admin', `--email=${user.email}`, `--password=${password}`], {
        DATABASE_URL: database.url,
      });
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toContain(
        `create-admin refused: ${user.email} already exists as an ordinary account and was not made an administrator`,
      );
      expect(outcome.stderr).toContain('--promote-existing');
      expect(outcome.stdout).toBe('');
      expectNoPassword(outcome, password);
      const { rows } = await test.db.query('SELECT is_admin FROM users WHERE email = $1', [user.email]);
      expect(rows[0].is_admin).toBe(false);
      // Its password and sessions are its own still.
      await signIn(test, user.email, user.password);
      await test.http().post('/auth/jwt/refresh/').send({ refresh: user.refresh }).expect(200);
    } finally {
      await test.close();
    }
  });

  it('promotes an existing account with --promote-existing, sets the password it was given, and ends its sessions', async () => {
    const test = await startTestApp({ ADMIN_EMAIL: '', ADMIN_PASSWORD: '' }, database);
    try {
      const user = await signUp(test);
      const outcome = await cli(
        ['create-admin', `--email=${user.email}`, `--password=${password}`, '--promote-existing'],
        { DATABASE_URL: database.url },
      );
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toContain(`Promoted ${user.email}`);
      expectNoPassword(outcome, password);
      // The running service sees the new password at once; the old refresh token is revoked.
      await signIn(test, user.email, password);
      await test.http().post('/auth/jwt/refresh/').send({ refresh: user.refresh }).expect(401);
      const { rows } = await test.db.query('SELECT is_admin FROM users WHERE email = $1', [user.email]);
      expect(rows[0].is_admin).toBe(true);
    } finally {
      await test.close();
    }
  });

  it.each([
    ['no command', []],
    ['an unknown command', ['create-user', '--email', 'x@example.com', '--password', password]],
    ['no --email', ['create-admin', '--password', password]],
    ['no --password', ['create-admin', '--email', 'x@example.com']],
    ['--password without its value', ['create-admin', '--email', 'x@example.com', '--password']],
    ['an unknown option', ['create-admin', '--email', 'x@example.com', '--password', password, '--admin']],
    ['a stray argument', ['create-admin', password, '--email', 'x@example.com', '--password', password]],
    ['an invalid e-mail', ['create-admin', '--email', 'not-an-email', '--password', password]],
    ['a password under 8 characters', ['create-admin', '--email', 'x@example.com', '--password', 'short7']],
    ['an all-digit password', ['create-admin', '--email', 'x@example.com', '--password', '12345678901']],
  ])('prints the usage and exits 2 with %s, creating nothing', async (_, args) => {
    const db = await connect(database.url);
    try {
      const before = (await db.query('SELECT count(*)::int AS n FROM users')).rows[0].n;
      const outcome = await cli(args, { DATABASE_URL: database.url });
      expect(outcome.code).toBe(2);
      expect(outcome.stderr).toMatch(/^error: /);
      expect(outcome.stderr).toContain(
        'Usage: npm run cli -- create-admin --email <address> (--password <password> | --password-stdin)',
      );
      expect(outcome.stdout).toBe('');
      for (const secret of [password, 'short7', '12345678901']) expectNoPassword(outcome, secret);
      expect((await db.query('SELECT count(*)::int AS n FROM users')).rows[0].n).toBe(before);
    } finally {
      await db.end();
    }
  });

  it('reads the password from standard input with --password-stdin, keeping it off the command line', async () => {
    const stdinPassword = 'piped secret password 9';
    const child = spawn(
      process.execPath,
      ['dist/cli.js', 'create-admin', '--email', 'piped@example.com', '--password-stdin'],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATABASE_URL: database.url },
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdin.end(`${stdinPassword}\n`);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(output).toContain('Created administrator piped@example.com');
    expect(output).not.toContain(stdinPassword);
    const test = await startTestApp({ ADMIN_EMAIL: '', ADMIN_PASSWORD: '' }, database);
    try {
      await signIn(test, 'piped@example.com', stdinPassword);
    } finally {
      await test.close();
    }
  });

  it('refuses --password and --password-stdin together', async () => {
    const outcome = await cli(
      ['create-admin', '--email', 'x@example.com', '--password', password, '--password-stdin'],
      { DATABASE_URL: database.url },
    );
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('error: give --password or --password-stdin, not both');
  });

  it('names the bad field when the password is too weak', async () => {
    const outcome = await cli(['create-admin', '--email', 'x@example.com', '--password', '1234567890'], {
      DATABASE_URL: database.url,
    });
    expect(outcome.stderr).toContain('--password: This password is entirely numeric.');
  });

  it('exits 1 with a message, not the password, when the database cannot be reached', async () => {
    const outcome = await cli(['create-admin', '--email', 'x@example.com', '--password', password], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere',
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/create-admin failed: .+/);
    expectNoPassword(outcome, password);
  });

  it('exits 1 naming the variable when the configuration is invalid', async () => {
    const outcome = await cli(['create-admin', '--email', 'x@example.com', '--password', password], {
      DATABASE_URL: 'mysql://nope',
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/\bDATABASE_URL\b/);
  });

  it('is wired as `npm run cli`', async () => {
    const outcome = await runBuilt(
      'npm',
      ['run', '--silent', 'cli', '--', 'create-admin', '--email', 'npm@example.com', '--password', password],
      {
        DATABASE_URL: database.url,
      },
      180_000,
    );
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('Created administrator npm@example.com');
    expectNoPassword(outcome, password);
  }, 200_000);

  describe('on the embedded store (no DATABASE_URL)', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kqs-cli-'));
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('creates the administrator in DATA_DIR, where the service then finds it', async () => {
      const outcome = await cli(['create-admin', '--email', 'local@example.com', '--password', password], {
        DATA_DIR: dataDir,
      });
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toContain('Created administrator local@example.com');
      expectNoPassword(outcome, password);

      const { createApp } = await import('../../src/app.js');
      const { loadConfig } = await import('../../src/config/env.schema.js');
      const app = await createApp(loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir }), { logger: false });
      try {
        await app.listen(0, '127.0.0.1');
        const request = (await import('supertest')).default;
        const tokens = await request(app.getHttpServer())
          .post('/auth/jwt/create/')
          .send({ email: 'local@example.com', password })
          .expect(200);
        const me = await request(app.getHttpServer())
          .get('/auth/users/me/')
          .set('Authorization', `Bearer ${tokens.body.access}`)
          .expect(200);
        expect(me.body.is_admin).toBe(true);

        // While the service holds DATA_DIR, the CLI refuses instead of corrupting it.
        const refused = await cli(['create-admin', '--email', 'second@example.com', '--password', password], {
          DATA_DIR: dataDir,
        });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toMatch(/in use by process \d+/);
        expectNoPassword(refused, password);
      } finally {
        await app.close();
      }
    }, 180_000);
  });
});

describe('npm run migration:run', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('applies every migration to a fresh database, then finds nothing to do', async () => {
    const first = await migrate({ DATABASE_URL: database.url });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Ran ${migrationNames.length} migration(s)`);
    const db = await connect(database.url);
    try {
      const { rows } = await db.query('SELECT name FROM migrations ORDER BY timestamp');
      expect(rows.map((row: { name: string }) => row.name)).toEqual(migrationNames);
    } finally {
      await db.end();
    }
    const second = await migrate({ DATABASE_URL: database.url });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('No pending migrations.');
  });

  it('leaves a database the service can use with MIGRATIONS_RUN=false', async () => {
    const test: TestApp = await startTestApp({ MIGRATIONS_RUN: 'false' }, database);
    try {
      await signUp(test);
    } finally {
      await test.close();
    }
  });

  it('exits 1 when the database cannot be reached', async () => {
    const outcome = await migrate({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/migration failed: .+/);
  });
});

describe('the service entry point (node dist/main.js)', () => {
  it.each([
    ['PORT', { PORT: 'eighty' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://db/kqs' }],
    ['ALLOW_SIGNUP', { ALLOW_SIGNUP: 'sometimes' }],
    ['JWT_SECRET', { NODE_ENV: 'production', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' }],
    ['JWT_SECRET', { NODE_ENV: 'production', JWT_SECRET: 'only-31-bytes-long-secret-value' }],
  ])('refuses to boot naming %s, exit code 1', async (name, env) => {
    const outcome = await runBuilt(process.execPath, ['dist/main.js'], env, 30_000);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(new RegExp(`\\b${name}\\b`));
    expect(outcome.stderr).not.toContain(TEST_JWT_SECRET);
    expect(outcome.stderr).not.toContain('only-31-bytes-long-secret-value');
  });
});
