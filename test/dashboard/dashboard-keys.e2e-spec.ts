import { signUp } from '../support/app.js';
import {
  type Dashboard,
  closeDashboard,
  dashboardHelpers,
  eventually,
  is,
  localDay,
  openDashboard,
  PASSWORD,
  SLOW,
  sleep,
} from '../support/dashboard.js';

/*
 * Serving the dashboard, signing up, and managing API keys in a real browser. The tests run in order and
 * share one signed-up person, as a person would use the app.
 */

// The page.evaluate callbacks run in the browser; this project's types have no DOM, so just these.
declare const document: {
  activeElement: { tagName: string; textContent: string | null } | null;
  querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }>;
};
declare const navigator: { clipboard: { readText(): Promise<string> } };

describe('dashboard in a real browser: sign-up and API keys', () => {
  let dashboard: Dashboard;
  const email = `dashboard-${Date.now()}@example.com`;
  let firstKey: string;
  const { shot, api, userJwt, keyRow, expectHeading } = dashboardHelpers(() => dashboard, email);
  let page: Dashboard['page'];
  let base: string;

  beforeAll(async () => {
    dashboard = await openDashboard();
    ({ page, base } = dashboard);
  }, SLOW);
  afterAll(() => closeDashboard(dashboard));

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
    it(
      'signs up a new user and lands on the API keys',
      async () => {
        await page.goto(`${base}/app/`);
        await expectHeading('Sign in');
        await shot('sign-in');
        await page.getByRole('link', { name: 'Create one' }).click();
        await expectHeading('Create an account');
        const taken = `taken-${Date.now()}@example.com`;
        await signUp(dashboard.test, taken);
        await page.getByLabel('E-mail').fill(taken);
        await page.getByLabel('Password', { exact: true }).fill('12345678');
        await page.getByRole('button', { name: 'Create account' }).click();
        // The API's message without its field prefix, under the field it is about.
        const passwordError = page.locator('.field', { has: page.locator('#password') }).locator('#password-error');
        await expect(passwordError.textContent()).resolves.toBe('This password is entirely numeric.');
        await expect(page.getByLabel('Password', { exact: true }).getAttribute('aria-describedby')).resolves.toContain(
          'password-error',
        );
        await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await passwordError.waitFor({ state: 'detached' });
        await page.getByRole('button', { name: 'Create account' }).click();
        const emailError = page.locator('.field', { has: page.locator('#email') }).locator('#email-error');
        await expect(emailError.textContent()).resolves.toBe('A user with that email already exists.');
        await expect(page.getByRole('alert').allTextContents()).resolves.toEqual([
          'A user with that email already exists.',
        ]);
        await shot('sign-up');
        await page.getByLabel('E-mail').fill(email);
        await emailError.waitFor({ state: 'detached' });
        await page.getByRole('button', { name: 'Create account' }).click();
        await expectHeading('API keys');
        // The landing page renders first; the address follows in an effect (replaceState) just after.
        await page.waitForURL((url) => url.pathname === '/app/keys', { timeout: 5_000 }).catch(() => undefined);
        expect(new URL(page.url()).pathname).toBe('/app/keys');
        await expect(page.locator('.account-email').textContent()).resolves.toBe(email);
      },
      SLOW,
    );
  });

  describe('API keys', () => {
    it(
      'creates a key and shows it in full exactly once, with a copy button',
      async () => {
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
      },
      SLOW,
    );

    it(
      'shows when the key was last used once it calls the API',
      async () => {
        await api().get('/auth/users/me/').set('X-API-Key', firstKey).expect(200);
        await sleep(500); // LAST_USED_FLUSH_MS is 200 in tests
        await page.getByRole('button', { name: 'Refresh' }).click();
        const lastUsed = keyRow('ci server').locator('[data-field="last-used"]');
        await eventually(
          () => lastUsed.textContent(),
          (text) => text !== 'Never',
        );
        const iso = await lastUsed.locator('time').getAttribute('datetime');
        expect(Math.abs(Date.parse(iso!) - Date.now())).toBeLessThan(60_000);
        await shot('keys');
      },
      SLOW,
    );

    it(
      'sets an expiry with the date picker, then removes it',
      async () => {
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
        const stored = (
          await api()
            .get('/v1/billings/api-keys/')
            .set(await userJwt())
            .expect(200)
        ).body as { name: string; expires_at: string | null }[];
        expect(stored.find((key) => key.name === 'ci server')?.expires_at).toBe(expected);

        await keyRow('ci server').getByRole('button', { name: 'Expiry of ci server' }).click();
        await dialog.getByRole('button', { name: 'Remove expiry' }).click();
        await dialog.waitFor({ state: 'detached' });
        await eventually(
          () => keyRow('ci server').locator('[data-field="expires"]').textContent(),
          is<string | null>('Never'),
        );
        // Escape closes a dialog without changes.
        await keyRow('ci server').getByRole('button', { name: 'Expiry of ci server' }).click();
        await dialog.waitFor();
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached' });
      },
      SLOW,
    );

    it(
      "shows the API's message without its field prefix under the field, and drops the last success message",
      async () => {
        // A success first: the settings saved as they are.
        await keyRow('ci server').getByRole('button', { name: 'Settings of ci server' }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Save settings' }).click();
        const status = page.locator('section[aria-labelledby="keys-heading"] [role="status"]');
        await eventually(() => status.textContent(), is<string | null>('“ci server” was saved.'));
        const refused = await api()
          .post('/v1/billings/api-keys/')
          .set(await userJwt())
          .send({ name: '   ' })
          .expect(400);
        const message = (refused.body as { fields: { name: string[] } }).fields.name[0];
        expect(refused.body.detail).toBe(`name: ${message}`);

        await page.getByLabel('Name', { exact: true }).fill('   ');
        await page.getByRole('button', { name: 'Create key' }).click();
        const nameError = page.locator('.field', { has: page.locator('#key-name') }).locator('#create-key-name-error');
        await expect(nameError.textContent()).resolves.toBe(message);
        await expect(page.locator('#create-key-error').count()).resolves.toBe(0);
        await expect(status.textContent()).resolves.toBe('');
        // Typing another name clears it.
        await page.getByLabel('Name', { exact: true }).fill('');
        await nameError.waitFor({ state: 'detached' });
      },
      SLOW,
    );

    it(
      'rotates a key with a grace period, shows the new key once, and Escape does not lose it',
      async () => {
        await keyRow('ci server').getByRole('button', { name: 'Rotate ci server' }).click();
        const confirm = page.getByRole('alertdialog', { name: 'Rotate “ci server”?' });
        await confirm.waitFor();
        await eventually(
          () => page.evaluate(() => document.activeElement?.textContent),
          is<string | null | undefined>('Cancel'),
        );
        await confirm.getByLabel(/keeps working/).selectOption({ label: '1 hour' });
        await shot('key-rotate');
        const rotatedAt = Date.now();
        await confirm.getByRole('button', { name: 'Rotate key' }).click();
        const reveal = page.getByRole('dialog', { name: 'New key for “ci server”' });
        await reveal.waitFor();
        const rotated = await reveal.getByLabel('API key').inputValue();
        expect(rotated).toMatch(/^svc_/);
        expect(rotated).not.toBe(firstKey);
        await reveal.getByText('The previous key keeps working until').waitFor();

        // Escape (twice: Chromium closes a dialog on a second Escape whatever the page does) keeps it open, with a warning.
        await page.keyboard.press('Escape');
        await page.keyboard.press('Escape');
        await reveal.getByRole('alert').filter({ hasText: 'This key will not be shown again.' }).waitFor();
        await expect(reveal.isVisible()).resolves.toBe(true);
        await expect(reveal.getByLabel('API key').inputValue()).resolves.toBe(rotated);
        await shot('key-rotated');
        await reveal.getByRole('button', { name: 'I have stored the key' }).click();
        await reveal.waitFor({ state: 'detached' });
        await expect(
          page.locator('section[aria-labelledby="keys-heading"] [role="status"]').textContent(),
        ).resolves.toBe(`“ci server” was rotated: ${firstKey.slice(0, 12)}… keeps working for 1 hour.`);

        // The old key says "Rotated", works for the hour, and links to its successor, which links back.
        const oldRow = keyRow('ci server', 'rotated');
        const newRow = keyRow('ci server', 'active');
        await expect(oldRow.locator('.badge').textContent()).resolves.toBe('Rotated');
        const rotatedTo = oldRow.locator('[data-field="rotated-to"]');
        await expect(rotatedTo.getByRole('link').textContent()).resolves.toBe(`${rotated.slice(0, 12)}…`);
        const until = Date.parse((await rotatedTo.locator('time').getAttribute('datetime'))!);
        expect(Math.abs(until - (rotatedAt + 3_600_000))).toBeLessThan(60_000);
        await expect(newRow.locator('[data-field="rotated-from"]').getByRole('link').textContent()).resolves.toBe(
          `${firstKey.slice(0, 12)}…`,
        );
        await rotatedTo.getByRole('link').click();
        const newId = await newRow.getAttribute('data-key-id');
        expect(new URL(page.url()).hash).toBe(`#key-${newId!}`);
        await api().get('/auth/users/me/').set('X-API-Key', firstKey).expect(200);
        await api().get('/auth/users/me/').set('X-API-Key', rotated).expect(200);

        // The activity log: who by e-mail, and the new key's prefix rather than a pair of ids.
        const rotation = page.locator('.key-events-table tr[data-action="rotated"]');
        await expect(rotation.locator('[data-field="changes"]').textContent()).resolves.toBe(
          `New key ${rotated.slice(0, 12)}…`,
        );
        await expect(rotation.locator('[data-field="actor"]').textContent()).resolves.toBe(`${email} from 127.0.0.1`);
        const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
        for (const cell of await page
          .locator('.key-events-table [data-field="changes"], .key-events-table [data-field="actor"]')
          .allTextContents())
          expect(cell).not.toMatch(uuid);
        await shot('keys-rotated');
        firstKey = rotated;
      },
      SLOW,
    );

    it(
      'revokes a key after a confirmation',
      async () => {
        await keyRow('ci server').getByRole('button', { name: 'Revoke ci server' }).click();
        const confirm = page.getByRole('alertdialog', { name: 'Revoke “ci server”?' });
        await confirm.waitFor();
        await shot('key-revoke');
        await confirm.getByRole('button', { name: 'Revoke key' }).click();
        await confirm.waitFor({ state: 'detached' });
        await eventually(() => page.locator('tr[data-status="active"]').count(), is(0));
        await expect(page.locator('.keys-table tbody .badge').allTextContents()).resolves.toEqual([
          'Revoked',
          'Rotated',
        ]);
        await api().get('/auth/users/me/').set('X-API-Key', firstKey).expect(401);
      },
      SLOW,
    );
  });
});
