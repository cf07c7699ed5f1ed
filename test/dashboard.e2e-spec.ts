import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { ADMIN, signIn, type SignedInUser, startTestApp, type TestApp } from './support/app.js';

/*
 * The dashboard in Debian's Chromium, driven by playwright-core, against the real service on a fresh
 * database. The tests run in order and share one signed-up user, as a person would use the app.
 * Screenshots go to docs/screenshots/ with UPDATE_SCREENSHOTS=1 (npm run screenshots), else to a
 * temporary directory, so an ordinary test run leaves the checkout clean.
 */

// The page.evaluate callbacks run in the browser; this project's types have no DOM, so just these.
declare const document: { activeElement: { tagName: string; textContent: string | null } | null; documentElement: { scrollWidth: number } };
declare const localStorage: { readonly length: number; key(index: number): string | null; getItem(key: string): string | null; setItem(key: string, value: string): void };
declare const axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
interface AxeViolation {
  id: string;
  help: string;
  nodes: { target: string[] }[];
}
declare const navigator: { clipboard: { readText(): Promise<string> } };
declare class DataTransfer {
  items: { add(file: File): void };
}
declare class File {
  constructor(parts: string[], name: string, options: { type: string });
}

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SLOW = 60_000;
const PASSWORD = 'correct horse battery';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Reads until the value is accepted (the page updates asynchronously), or fails with the last one. */
async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeout = 10_000): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(value)} after ${timeout} ms`);
    await sleep(100);
  }
}
const is =
  <T,>(expected: T) =>
  (value: T) =>
    value === expected;

/** Fails with axe-core's WCAG 2.1 A/AA findings for what the page shows now. */
async function expectAccessible(target: Page, screen: string): Promise<void> {
  // Evaluated through the DevTools protocol, so the page's content security policy does not block it.
  await target.evaluate(await readFile(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
  const { violations } = await target.evaluate(() =>
    axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
  );
  const findings = violations.map((violation) => `${violation.id} (${violation.help}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
  expect({ screen, findings }).toEqual({ screen, findings: [] });
}

/** A fresh build of web/ into a private directory: no race with other test runs over web/dist. */
async function buildDashboard(): Promise<string> {
  const outDir = await mkdtemp(join(tmpdir(), 'kqs-dashboard-'));
  const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  await run(process.execPath, [vite, 'build', '--config', 'web/vite.config.ts', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'error'], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return outDir;
}

/** `YYYY-MM-DD` in the local time zone, which the browser shares with this process. */
function localDay(offsetDays: number): string {
  const day = new Date();
  day.setDate(day.getDate() + offsetDays);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}`;
}

describe('dashboard in a real browser', () => {
  let test: TestApp;
  let webDir: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let screenshotDir: string;
  const email = `dashboard-${Date.now()}@example.com`;
  let admin: SignedInUser;
  let firstKey: string;

  /** A screenshot of a main screen, which must also pass axe-core's checks. */
  const shot = async (name: string, target: Page = page) => {
    await target.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage: true });
    await expectAccessible(target, name);
  };
  const api = () => test.http();
  const userJwt = async () => (await signIn(test, email, PASSWORD)).auth;
  const keyRow = (name: string, status = 'active'): Locator => page.locator(`tr[data-status="${status}"]`, { has: page.getByRole('rowheader', { name, exact: true }) });
  const headerCreditsUsed = async () => Number(await page.getByTestId('quota-compact').getByRole('meter').getAttribute('aria-valuenow'));
  const goTo = async (label: string, heading = label) => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
    await expectHeading(heading);
  };
  const expectHeading = (name: string, target: Page = page) => target.getByRole('heading', { level: 1, name }).waitFor();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
    webDir = await buildDashboard();
    screenshotDir = process.env.UPDATE_SCREENSHOTS ? join(ROOT, 'docs', 'screenshots') : await mkdtemp(join(tmpdir(), 'kqs-shots-'));
    await mkdir(screenshotDir, { recursive: true });
    // As the dashboard's deployment docs say: refresh tokens rotate.
    test = await startTestApp({ DASHBOARD_DIR: webDir, JWT_ROTATE_REFRESH_TOKENS: 'true' });
    base = `http://127.0.0.1:${(test.server.address() as AddressInfo).port}`;
    admin = await signIn(test, ADMIN.email, ADMIN.password);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
  }, SLOW);

  afterAll(async () => {
    await browser?.close();
    await test?.close();
    if (webDir) await rm(webDir, { recursive: true, force: true });
    if (screenshotDir && !process.env.UPDATE_SCREENSHOTS) await rm(screenshotDir, { recursive: true, force: true });
  });

  describe('serving', () => {
    it('redirects /app to /app/ and serves the page for any dashboard path', async () => {
      const redirect = await api().get('/app?from=test').expect(301);
      expect(redirect.headers.location).toBe('/app/?from=test');
      const reload = await api().get('/app/keys').expect(200);
      expect(reload.headers['content-type']).toMatch(/^text\/html/);
      expect(reload.headers['content-security-policy']).toContain("default-src 'self'");
      expect(reload.text).toContain('<div id="root">');
    });

    it('keeps JSON 404s for missing assets, other methods and API paths', async () => {
      expect((await api().get('/app/assets/missing.js').expect(404)).body).toEqual({ detail: 'Not found.' });
      expect((await api().post('/app/keys').send({}).expect(404)).body).toEqual({ detail: 'Not found.' });
      expect((await api().get('/v1/no-such-thing/').expect(404)).body).toEqual({ detail: 'Not found.' });
      expect((await api().get('/application').expect(404)).body).toEqual({ detail: 'Not found.' });
    });
  });

  describe('account', () => {
    it('signs up a new user and lands on the API keys', async () => {
      await page.goto(`${base}/app/`);
      await expectHeading('Sign in');
      await shot('sign-in');
      await page.getByRole('link', { name: 'Create one' }).click();
      await expectHeading('Create an account');
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password', { exact: true }).fill('12345678');
      await page.getByRole('button', { name: 'Create account' }).click();
      // The API's detail, next to the form that caused it.
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/password/i);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await shot('sign-up');
      await page.getByRole('button', { name: 'Create account' }).click();
      await expectHeading('API keys');
      expect(new URL(page.url()).pathname).toBe('/app/keys');
      await expect(page.locator('.account-email').textContent()).resolves.toBe(email);
    }, SLOW);
  });

  describe('API keys', () => {
    it('shows an API error next to the create form', async () => {
      await page.getByLabel('Name', { exact: true }).fill('   ');
      await page.getByRole('button', { name: 'Create key' }).click();
      await expect(page.locator('#create-key-error').textContent()).resolves.toMatch(/^name: /);
    });

    it('creates a key and shows it in full exactly once, with a copy button', async () => {
      await page.getByLabel('Name', { exact: true }).fill('ci server');
      await page.getByRole('button', { name: 'Create key' }).click();
      const dialog = page.getByRole('dialog', { name: 'Key “ci server” created' });
      await dialog.waitFor();
      firstKey = await dialog.getByLabel('API key').inputValue();
      expect(firstKey).toMatch(/^svc_[0-9A-Za-z]{38}$/);
      await expect(dialog.textContent()).resolves.toContain('shown only once');
      await shot('key-created');
      await dialog.getByRole('button', { name: 'Copy' }).click();
      await dialog.getByText('Copied to the clipboard.').waitFor();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(firstKey);
      await dialog.getByRole('button', { name: 'I have stored the key' }).click();
      await dialog.waitFor({ state: 'detached' });

      const row = keyRow('ci server');
      await expect(row.locator('code').textContent()).resolves.toBe(`${firstKey.slice(0, 12)}…`);
      await expect(row.locator('[data-field="last-used"]').textContent()).resolves.toBe('Never');
      // Gone for good: not in the page, not after a reload.
      expect(await page.content()).not.toContain(firstKey);
      await page.reload();
      await expectHeading('API keys');
      expect(await page.content()).not.toContain(firstKey);
    }, SLOW);

    it('shows when the key was last used once it calls the API', async () => {
      await api().get('/auth/users/me/').set('X-API-Key', firstKey).expect(200);
      await sleep(500); // LAST_USED_FLUSH_MS is 200 in tests
      await page.getByRole('button', { name: 'Refresh' }).click();
      const lastUsed = keyRow('ci server').locator('[data-field="last-used"]');
      await eventually(() => lastUsed.textContent(), (text) => text !== 'Never');
      const iso = await lastUsed.locator('time').getAttribute('datetime');
      expect(Math.abs(Date.parse(iso!) - Date.now())).toBeLessThan(60_000);
      await shot('keys');
    }, SLOW);

    it('sets an expiry with the date picker, then removes it', async () => {
      const day = localDay(30);
      await keyRow('ci server').getByRole('button', { name: 'Expiry of ci server' }).click();
      const dialog = page.getByRole('dialog', { name: 'Expiry of “ci server”' });
      await dialog.getByLabel('Stops working at the end of').fill(day);
      await shot('key-expiry');
      await dialog.getByRole('button', { name: 'Save expiry' }).click();
      await dialog.waitFor({ state: 'detached' });

      const [year, month, date] = day.split('-').map(Number);
      const expected = new Date(year, month - 1, date, 23, 59, 59).toISOString().replace('.000Z', '.000000Z');
      const expires = keyRow('ci server').locator('[data-field="expires"] time');
      await eventually(() => expires.getAttribute('datetime'), is<string | null>(expected));
      const stored = (await api().get('/v1/billings/api-keys/').set(await userJwt()).expect(200)).body as { name: string; expires_at: string | null }[];
      expect(stored.find((key) => key.name === 'ci server')?.expires_at).toBe(expected);

      await keyRow('ci server').getByRole('button', { name: 'Expiry of ci server' }).click();
      await dialog.getByRole('button', { name: 'Remove expiry' }).click();
      await dialog.waitFor({ state: 'detached' });
      await eventually(() => keyRow('ci server').locator('[data-field="expires"]').textContent(), is<string | null>('Never'));
      // Escape closes a dialog without changes.
      await keyRow('ci server').getByRole('button', { name: 'Expiry of ci server' }).click();
      await dialog.waitFor();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
    }, SLOW);

    it('rotates a key after a confirmation and shows the new key once', async () => {
      await keyRow('ci server').getByRole('button', { name: 'Rotate ci server' }).click();
      const confirm = page.getByRole('alertdialog', { name: 'Rotate “ci server”?' });
      await confirm.waitFor();
      await eventually(() => page.evaluate(() => document.activeElement?.textContent), is<string | null | undefined>('Cancel'));
      await confirm.getByRole('button', { name: 'Rotate key' }).click();
      const reveal = page.getByRole('dialog', { name: 'New key for “ci server”' });
      await reveal.waitFor();
      const rotated = await reveal.getByLabel('API key').inputValue();
      expect(rotated).toMatch(/^svc_/);
      expect(rotated).not.toBe(firstKey);
      await reveal.getByRole('button', { name: 'I have stored the key' }).click();

      await keyRow('ci server', 'revoked').waitFor();
      await keyRow('ci server', 'active').waitFor();
      await api().get('/auth/users/me/').set('X-API-Key', firstKey).expect(401);
      await api().get('/auth/users/me/').set('X-API-Key', rotated).expect(200);
      firstKey = rotated;
    }, SLOW);

    it('revokes a key after a confirmation', async () => {
      await keyRow('ci server').getByRole('button', { name: 'Revoke ci server' }).click();
      const confirm = page.getByRole('alertdialog', { name: 'Revoke “ci server”?' });
      await confirm.waitFor();
      await shot('key-revoke');
      await confirm.getByRole('button', { name: 'Revoke key' }).click();
      await confirm.waitFor({ state: 'detached' });
      await eventually(() => page.locator('tr[data-status="active"]').count(), is(0));
      await expect(page.locator('tr[data-status="revoked"] .badge').allTextContents()).resolves.toEqual(['Revoked', 'Revoked']);
      await api().get('/auth/users/me/').set('X-API-Key', firstKey).expect(401);
    }, SLOW);
  });

  describe('knowledge', () => {
    const slug = `handbook-${Date.now().toString(36)}`;

    beforeAll(async () => {
      await api().post('/v1/domains/').set(admin.auth).send({ name: 'Staff handbook', slug, description: 'Policies for staff.' }).expect(201);
      await api()
        .post(`/v1/domains/${slug}/documents/`)
        .set(admin.auth)
        .send({
          title: 'Holiday policy',
          content: 'Every employee gets thirty days of paid holiday per year. Unused holiday days carry over until March.',
          metadata: { section: 'leave', version: 3 },
        })
        .expect(201);
      await api()
        .post(`/v1/domains/${slug}/documents/`)
        .set(admin.auth)
        .send({ title: 'Expenses', content: 'Travel expenses are reimbursed within two weeks when receipts are attached.' })
        .expect(201);
    }, SLOW);

    it('asks a public domain, shows the answer with its sources, and the quota meter falls', async () => {
      await goTo('Ask');
      await page.getByTestId('quota-compact').waitFor();
      const usedBefore = await headerCreditsUsed();
      await page.getByLabel('Knowledge base').selectOption(slug);
      await page.getByLabel('Question').fill('How many days of paid holiday do employees get?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();

      const answer = page.locator('.message-assistant').last();
      await answer.locator('.sources').waitFor({ timeout: 30_000 });
      await expect(answer.locator('.source-title').first().textContent()).resolves.toBe('Holiday policy');
      await expect(answer.locator('.metadata').first().textContent()).resolves.toContain('leave');
      await eventually(headerCreditsUsed, is(usedBefore + 1));
      await page.getByText('Asking: Staff handbook').waitFor();
      await shot('ask');

      // Listed and resumable after a reload.
      const path = new URL(page.url()).pathname;
      expect(path).toMatch(/^\/app\/ask\/[0-9a-f-]{36}$/);
      await page.reload();
      await page.locator('.message-assistant .source-title').first().waitFor();
      await page.getByRole('complementary').getByRole('link', { name: /How many days of paid holiday/ }).waitFor();

      // A follow-up in the same conversation, sent with Enter.
      await page.getByLabel('Question').fill('Do unused days carry over?');
      await page.getByLabel('Question').press('Enter');
      await eventually(() => page.locator('.message-assistant:not([aria-busy="true"])').count(), is(2), 30_000);
      await eventually(headerCreditsUsed, is(usedBefore + 2));
    }, SLOW);

    it('uploads a private document by drag and drop, lists it, and deletes it', async () => {
      await goTo('Documents');
      const dataTransfer = await page.evaluateHandle(() => {
        const transfer = new DataTransfer();
        const text = '# Onboarding\n\nNew starters receive a laptop on their first day and meet their buddy.';
        transfer.items.add(new File([text], 'onboarding.md', { type: 'text/markdown' }));
        return transfer;
      });
      await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer });
      await page.getByText('Selected: onboarding.md').waitFor();
      await page.getByRole('button', { name: 'Upload' }).click();
      const row = page.locator('tr', { has: page.getByRole('rowheader', { name: 'onboarding.md' }) });
      await row.waitFor({ timeout: 30_000 });
      await page.getByText('“onboarding.md” was added').waitFor();

      // A second one through the file chooser, with a title.
      await page.getByLabel(/choose one/).setInputFiles({ name: 'security.txt', mimeType: 'text/plain', buffer: Buffer.from('Badges must be worn at all times in the office.') });
      await page.getByLabel('Title (optional)').fill('Security rules');
      await page.getByRole('button', { name: 'Upload' }).click();
      await page.getByRole('rowheader', { name: 'Security rules' }).waitFor({ timeout: 30_000 });
      await shot('documents');

      // The private knowledge base answers from it.
      await goTo('Ask');
      await page.getByLabel('Knowledge base').selectOption('');
      await page.getByLabel('Question').fill('What do new starters receive on their first day?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      await expect(page.locator('.message-assistant .source-title').first().textContent({ timeout: 30_000 })).resolves.toBe('onboarding.md');

      await goTo('Documents');
      await page.getByRole('button', { name: 'Delete Security rules' }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Delete document' }).click();
      await page.getByRole('rowheader', { name: 'Security rules' }).waitFor({ state: 'detached' });
      await page.getByRole('rowheader', { name: 'onboarding.md' }).waitFor();
    }, SLOW);

    it('renames the organization and restricts its domains, which the Ask page follows', async () => {
      await goTo('Organization');
      await page.getByLabel('Organization name').fill('Acme Research');
      await page.getByRole('button', { name: 'Rename' }).click();
      await page.getByText('The name was saved.').waitFor();

      await page.getByLabel('Only the domains selected below').check();
      await page.getByRole('group', { name: 'Domains', exact: true }).getByLabel(/Staff handbook/).waitFor();
      await page.getByRole('button', { name: 'Save allowed domains' }).click();
      await page.getByText('Allowed domains were saved.').waitFor();
      const organization = (await api().get('/v1/organizations/current/').set(await userJwt()).expect(200)).body;
      expect(organization).toMatchObject({ name: 'Acme Research', allowed_domains: [] });
      await shot('organization');

      await goTo('Ask');
      await page.locator('#knowledge-base[aria-busy="false"]').waitFor();
      await expect(page.getByLabel('Knowledge base').locator('option').allTextContents()).resolves.toEqual(['Private knowledge base (your documents)']);

      await goTo('Organization');
      await page.getByLabel('Only the domains selected below').check();
      await page.getByRole('group', { name: 'Domains', exact: true }).getByLabel(/Staff handbook/).check();
      await page.getByRole('button', { name: 'Save allowed domains' }).click();
      await page.getByText('Allowed domains were saved.').waitFor();
      const allowed = (await api().get('/v1/organizations/current/').set(await userJwt()).expect(200)).body;
      expect(allowed.allowed_domains).toEqual([slug]);
    }, SLOW);
  });

  describe('usage', () => {
    it("shows the quota meter and today's credits in the chart", async () => {
      await goTo('Usage');
      const meter = page.getByTestId('quota').getByRole('meter');
      await eventually(() => meter.getAttribute('aria-valuenow'), is<string | null>('3'));
      await expect(meter.getAttribute('aria-valuetext')).resolves.toMatch(/^3 of [\d,]+ credits used/);
      const bars = page.locator('.chart-bar');
      await eventually(() => bars.count(), is(1));
      await expect(bars.first().locator('title').textContent()).resolves.toMatch(/: 3 credits$/);
      await shot('usage');
    }, SLOW);

    it('shows a banner when the quota is used up, and the 402 detail where a question was asked', async () => {
      const jwt = await userJwt();
      const me = (await api().get('/auth/users/me/').set(jwt).expect(200)).body;
      const { current_quota: quota } = (await api().get('/v1/billings/subscription/').set(jwt).expect(200)).body;
      await api()
        .patch(`/v1/billings/organizations/${me.organization_id}/subscription/`)
        .set(admin.auth)
        .send({ monthly_credits: quota.credits_used })
        .expect(200);
      await page.reload();
      await page.getByRole('alert').filter({ hasText: 'Your credits for this period are used up.' }).waitFor();
      await shot('usage-exhausted');

      await goTo('Ask');
      await page.getByLabel('Question').fill('Anything?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      await expect(page.locator('#ask-error').textContent({ timeout: 30_000 })).resolves.toBe(
        'Credit quota exhausted. Upgrade your plan or wait for your quota to reset.',
      );
      await api().patch(`/v1/billings/organizations/${me.organization_id}/subscription/`).set(admin.auth).send({ monthly_credits: 1000 }).expect(200);
    }, SLOW);
  });

  describe('session', () => {
    const storedRefresh = (target: Page = page) => target.evaluate(() => localStorage.getItem('kqs.refresh'));
    const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { token_type?: string };
    const listRefused = { detail: 'Given token not valid for any token type', code: 'token_not_valid' };

    it('keeps only the refresh token in localStorage, never the access token', async () => {
      await page.goto(`${base}/app/keys`);
      await page.getByRole('rowheader', { name: 'ci server' }).first().waitFor();
      const stored = await page.evaluate(() => Array.from({ length: localStorage.length }, (_, i) => localStorage.getItem(localStorage.key(i)!) ?? ''));
      expect(stored.join(' ')).not.toMatch(/access/);
      const tokens = stored.filter((value) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(value));
      expect(tokens.map((token) => claimsOf(token).token_type)).toEqual(['refresh']);
    }, SLOW);

    it('refreshes the access token shortly before it expires, and stores the rotated refresh token', async () => {
      // A context of its own (a fake clock applies to a whole context), with a sign-in of its own.
      const { refresh } = await signIn(test, email, PASSWORD);
      const clockedContext = await browser.newContext({
        storageState: { cookies: [], origins: [{ origin: base, localStorage: [{ name: 'kqs.refresh', value: refresh }] }] },
      });
      const clocked = await clockedContext.newPage();
      try {
        await clocked.clock.install();
        await clocked.goto(`${base}/app/keys`);
        await clocked.getByRole('rowheader', { name: 'ci server' }).first().waitFor();
        const before = (await storedRefresh(clocked))!;
        expect(before).not.toBe(refresh); // the reload itself got an access token, rotating the refresh token
        const refreshed = clocked.waitForResponse((response) => response.url().endsWith('/auth/jwt/refresh/'));
        await clocked.clock.fastForward('29:30'); // 30-minute tokens, refreshed a minute early
        expect((await refreshed).status()).toBe(200);
        await eventually(() => storedRefresh(clocked), (stored) => stored !== before && stored !== null);
      } finally {
        await clockedContext.close();
      }
    }, SLOW);

    it('gets a new access token after a reload from the refresh token alone', async () => {
      const before = await storedRefresh();
      const refreshed = page.waitForResponse((response) => response.url().endsWith('/auth/jwt/refresh/'));
      await page.reload();
      expect((await refreshed).status()).toBe(200);
      await page.getByRole('rowheader', { name: 'ci server' }).first().waitFor();
      expect(await storedRefresh()).not.toBe(before);
    }, SLOW);

    it('retries once with a new access token when the API answers 401', async () => {
      let refused = 0;
      await page.route('**/v1/billings/api-keys/', (route) => {
        if (route.request().method() !== 'GET' || refused > 0) return route.continue();
        refused++;
        return route.fulfill({ status: 401, contentType: 'application/json', body: JSON.stringify(listRefused) });
      });
      try {
        await goTo('Usage');
        const refreshed = page.waitForResponse((response) => response.url().endsWith('/auth/jwt/refresh/'));
        await goTo('API keys');
        expect((await refreshed).status()).toBe(200);
        await page.getByRole('rowheader', { name: 'ci server' }).first().waitFor();
        expect(refused).toBe(1);
      } finally {
        await page.unroute('**/v1/billings/api-keys/');
      }
    }, SLOW);

    it('returns to sign-in with a message when the session has expired', async () => {
      await api().post('/auth/jwt/logout/').send({ refresh: await storedRefresh() }).expect(204); // as if it expired
      await page.goto(`${base}/app/usage`);
      await page.getByRole('alert').filter({ hasText: 'Your session has expired. Please sign in again.' }).waitFor();
      await expectHeading('Sign in');
      await shot('session-expired');

      // Signing in again returns to the page that was asked for.
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expectHeading('Usage');
      expect(new URL(page.url()).pathname).toBe('/app/usage');
    }, SLOW);

    it('signs out and revokes the refresh token', async () => {
      const refresh = (await storedRefresh())!;
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('You have signed out.').waitFor();
      expect(await storedRefresh()).toBeNull();
      await eventually(async () => (await api().post('/auth/jwt/refresh/').send({ refresh })).status, is(401));
    }, SLOW);

    it('signs out everywhere from the Organization page: every session of the person ends', async () => {
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      const otherDevice = await signIn(test, email, PASSWORD);
      await goTo('Organization');
      await page.getByRole('button', { name: 'Sign out everywhere' }).click();
      await page.getByText('You have signed out on every device.').waitFor();
      await expectHeading('Sign in');
      expect(await storedRefresh()).toBeNull();
      expect((await api().post('/auth/jwt/refresh/').send({ refresh: otherDevice.refresh })).status).toBe(401);
      expect((await api().get('/auth/users/me/').set(otherDevice.auth)).status).toBe(401);
    }, SLOW);
  });

  describe('on a phone', () => {
    it('fits a phone-sized screen, keyboard first', async () => {
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-US' });
      const small = await phone.newPage();
      try {
        await small.goto(`${base}/app/keys`);
        await small.getByLabel('E-mail').fill(email);
        await small.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await small.getByLabel('Password', { exact: true }).press('Enter');
        await expectHeading('API keys', small);
        await small.getByRole('rowheader', { name: 'ci server' }).first().waitFor();
        await shot('keys-phone', small);
        // Nothing on any page is wider than the screen.
        for (const [label, heading] of [['Usage', 'Usage'], ['Documents', 'Documents'], ['Organization', 'Organization'], ['Ask', 'Ask'], ['API keys', 'API keys']]) {
          await small.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
          await expectHeading(heading, small);
          await sleep(300);
          await expect(small.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
        }

        // Keyboard: the skip link comes first, and a page change moves focus to the new heading.
        const focused = () => small.evaluate(() => `${document.activeElement?.tagName}:${document.activeElement?.textContent}`);
        await small.reload();
        await small.getByRole('rowheader', { name: 'ci server' }).first().waitFor();
        await small.keyboard.press('Tab');
        await eventually(focused, is('A:Skip to content'));
        await small.keyboard.press('Enter');
        await eventually(focused, (value) => value.startsWith('MAIN:'));
        await small.getByRole('link', { name: 'Ask', exact: true }).click();
        await eventually(focused, is('H1:Ask'));
        await small.locator('.session-list a', { hasText: 'How many days of paid holiday' }).click();
        await small.locator('.message-assistant').first().waitFor();
        await expect(small.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
        await shot('ask-phone', small);
      } finally {
        await phone.close();
      }
    }, SLOW);
  });
});
