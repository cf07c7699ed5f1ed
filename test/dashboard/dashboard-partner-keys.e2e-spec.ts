import { signUp } from '../support/app.js';
import {
  type Dashboard,
  closeDashboard,
  dashboardHelpers,
  eventually,
  is,
  openDashboard,
  PASSWORD,
  SLOW,
} from '../support/dashboard.js';

/*
 * Partner keys in a real browser: scopes, limits and metadata in the key dialog, the key audit log,
 * and usage by key. The tests run in order and share one person, signed in through the page.
 */

// The page.evaluate callbacks run in the browser; this project's types have no DOM, so just these.
interface BrowserElement {
  scrollHeight: number;
  clientHeight: number;
  contains(other: BrowserElement | null): boolean;
  getBoundingClientRect(): { top: number; bottom: number; left: number; right: number };
}
declare const document: {
  querySelector(selector: string): BrowserElement | null;
  elementFromPoint(x: number, y: number): BrowserElement | null;
};
declare const window: { innerHeight: number };

interface StoredKey {
  id: string;
  name: string;
  scopes: string[] | null;
  rate_limit_per_minute: number | null;
  monthly_credit_limit: number | null;
  metadata: Record<string, string | number>;
}

describe('dashboard in a real browser: partner keys and usage by key', () => {
  let dashboard: Dashboard;
  const email = `dashboard-partner-${Date.now()}@example.com`;
  const { shot, api, userJwt, keyRow, goTo, expectHeading } = dashboardHelpers(() => dashboard, email);
  let page: Dashboard['page'];
  let fullKey: string;

  const storedKey = async (name: string): Promise<StoredKey> => {
    const keys = (
      await api()
        .get('/v1/billings/api-keys/')
        .set(await userJwt())
        .expect(200)
    ).body as StoredKey[];
    return keys.find((key) => key.name === name)!;
  };

  beforeAll(async () => {
    dashboard = await openDashboard();
    page = dashboard.page;
    await signUp(dashboard.test, email);
    await page.goto(`${dashboard.base}/app/keys`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectHeading('API keys');
  }, SLOW);
  afterAll(() => closeDashboard(dashboard));

  it(
    'creates a key with scopes, both limits and metadata',
    async () => {
      await page.getByLabel('Name', { exact: true }).fill('partner acme');
      await page.getByText('Scopes, limits and metadata').click();
      await page.getByRole('checkbox', { name: 'query Queries and chat messages' }).check();
      await page.getByRole('checkbox', { name: 'usage:read Subscription and usage' }).check();
      await page.getByLabel('Requests per minute').fill('600');
      await page.getByLabel('Monthly credit limit').fill('50');
      await page.getByRole('button', { name: 'Add metadata' }).click();
      await page.getByLabel('Key 1', { exact: true }).fill('customer');
      await page.getByLabel('Value 1', { exact: true }).fill('acme');
      await page.getByRole('button', { name: 'Add metadata' }).click();
      await page.getByLabel('Key 2', { exact: true }).fill('tier');
      await page.getByLabel('Type 2', { exact: true }).selectOption('number');
      await page.getByLabel('Value 2', { exact: true }).fill('2');
      await shot('key-create-settings');
      await page.getByRole('button', { name: 'Create key' }).click();

      const reveal = page.getByRole('dialog', { name: 'Key “partner acme” created' });
      await reveal.waitFor();
      fullKey = await reveal.getByLabel('API key').inputValue();
      await reveal.getByRole('button', { name: 'I have stored the key' }).click();

      expect(await storedKey('partner acme')).toMatchObject({
        scopes: ['query', 'usage:read'],
        rate_limit_per_minute: 600,
        monthly_credit_limit: 50,
        metadata: { customer: 'acme', tier: 2 },
      });
      await expect(keyRow('partner acme').locator('[data-field="access"]').textContent()).resolves.toBe(
        'query, usage:read · 600/min · 0 of 50 credits this month',
      );
      // The form is empty again for the next key.
      await expect(page.getByRole('checkbox', { name: 'query Queries and chat messages' }).isChecked()).resolves.toBe(
        false,
      );
      // The scopes hold: this key may not upload documents.
      await api()
        .post('/v1/documents/')
        .set('X-API-Key', fullKey)
        .send({ title: 'x', content: 'y' })
        .expect(403, { detail: 'This API key lacks the scope "documents:write".' });
    },
    SLOW,
  );

  it(
    "edits a key's scopes, limits and metadata in the settings dialog, and shows the API's error there",
    async () => {
      // A laptop screen: the dialog is taller than it, and its Save button stays in sight.
      await page.setViewportSize({ width: 1280, height: 800 });
      await keyRow('partner acme').getByRole('button', { name: 'Settings of partner acme' }).click();
      const dialog = page.getByRole('dialog', { name: 'Settings of “partner acme”' });
      await dialog.waitFor();
      const saveInSight = () =>
        page.evaluate(() => {
          const scroller = document.querySelector('dialog[open]')!;
          const save = document.querySelector('dialog[open] button[type="submit"]')!;
          const box = save.getBoundingClientRect();
          const hit = document.elementFromPoint((box.left + box.right) / 2, (box.top + box.bottom) / 2);
          return {
            scrolls: scroller.scrollHeight > scroller.clientHeight,
            inViewport: box.top >= 0 && box.bottom <= window.innerHeight,
            uncovered: save.contains(hit),
          };
        });
      await expect(saveInSight()).resolves.toEqual({ scrolls: true, inViewport: true, uncovered: true });
      await expect(
        dialog.getByRole('checkbox', { name: 'usage:read Subscription and usage' }).isChecked(),
      ).resolves.toBe(true);
      // Metadata rows in the order the service keeps them (PostgreSQL's jsonb: shorter keys first).
      await expect(dialog.getByLabel('Key 1', { exact: true }).inputValue()).resolves.toBe('tier');
      await expect(dialog.getByLabel('Value 1', { exact: true }).inputValue()).resolves.toBe('2');
      await expect(dialog.getByLabel('Type 1', { exact: true }).inputValue()).resolves.toBe('number');

      // Metadata over the service's size limit: the API's detail, next to the form.
      await dialog.getByLabel('Value 2', { exact: true }).fill('a'.repeat(1100));
      await dialog.getByRole('button', { name: 'Save settings' }).click();
      // The API's message, without its `metadata: ` prefix, under the metadata and scrolled into view.
      const metadataError = dialog.getByRole('group', { name: 'Metadata' }).locator('#settings-metadata-error');
      await expect(metadataError.textContent()).resolves.toMatch(/^(?!metadata:)\S/);
      const errorBox = (await metadataError.boundingBox())!;
      expect(errorBox.y >= 0 && errorBox.y + errorBox.height <= 800).toBe(true);
      await expect(dialog.locator('#settings-error').count()).resolves.toBe(0);
      await expect(saveInSight()).resolves.toEqual({ scrolls: true, inViewport: true, uncovered: true });

      await dialog.getByLabel('Value 2', { exact: true }).fill('acme');
      await dialog.getByRole('checkbox', { name: 'query Queries and chat messages' }).uncheck();
      await dialog.getByRole('checkbox', { name: 'usage:read Subscription and usage' }).uncheck();
      await dialog.getByLabel('Requests per minute').fill('');
      await dialog.getByLabel('Monthly credit limit').fill('10');
      await dialog.getByRole('button', { name: 'Remove metadata row 1' }).click();
      await shot('key-settings');
      await dialog.getByRole('button', { name: 'Save settings' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.setViewportSize({ width: 1280, height: 860 });

      await eventually(
        () => keyRow('partner acme').locator('[data-field="access"]').textContent(),
        is<string | null>('All scopes · 0 of 10 credits this month'),
      );
      expect(await storedKey('partner acme')).toMatchObject({
        scopes: null,
        rate_limit_per_minute: null,
        monthly_credit_limit: 10,
        metadata: { customer: 'acme' },
      });
    },
    SLOW,
  );

  it(
    'lists the key changes in the activity log, newest first, with what an update changed',
    async () => {
      const activity = page.locator('.key-events-table tbody tr');
      await eventually(() => activity.count(), is(2));
      await expect(activity.locator('th').allTextContents()).resolves.toEqual(['Updated', 'Created']);
      const changes = await activity.first().locator('[data-field="changes"] li').allTextContents();
      expect(changes).toEqual(
        expect.arrayContaining([
          'scopes: ["query","usage:read"] → —',
          'rate_limit_per_minute: 600 → —',
          'monthly_credit_limit: 50 → 10',
          'metadata: {"tier":2,"customer":"acme"} → {"customer":"acme"}',
        ]),
      );
      // Who made each change, by e-mail.
      await expect(activity.locator('[data-field="actor"]').allTextContents()).resolves.toEqual([
        `${email} from 127.0.0.1`,
        `${email} from 127.0.0.1`,
      ]);
      // Never the key itself.
      expect(await page.content()).not.toContain(fullKey);
      await shot('key-activity');
    },
    SLOW,
  );

  it(
    'shows usage by key: credits per key as bars, and every key in a table with the JWT row',
    async () => {
      const jwt = await userJwt();
      await api()
        .post('/v1/documents/')
        .set(jwt)
        .send({ title: 'Holiday policy', content: 'Every employee gets thirty days of paid holiday per year.' })
        .expect(201);
      for (let i = 0; i < 3; i++) {
        await api().post('/v1/query/').set('X-API-Key', fullKey).send({ query: 'paid holiday' }).expect(200);
      }
      await api().post('/v1/query/').set(jwt).send({ query: 'paid holiday' }).expect(200);

      await goTo('Usage');
      const table = page.locator('.key-usage-table');
      const row = (id: string) => table.locator(`tr[data-key-id="${id}"]`);
      const { id } = await storedKey('partner acme');
      await eventually(() => row(id).locator('[data-field="credits"]').textContent(), is<string | null>('3'));
      await expect(row(id).locator('[data-field="requests"]').textContent()).resolves.toBe('3');
      await expect(row('jwt').locator('th').textContent()).resolves.toBe('Signed in (JWT)');
      await expect(row('jwt').locator('[data-field="credits"]').textContent()).resolves.toBe('1');
      const chart = page.getByRole('img', { name: /Credits per key this period/ });
      await expect(chart.locator('.key-usage-bar').count()).resolves.toBe(2);
      await expect(page.locator('.key-usage figcaption').textContent()).resolves.toBe(
        '4 credits this period; the most by partner acme (' + fullKey.slice(0, 12) + '…): 3.',
      );
      await shot('usage-by-key');
    },
    SLOW,
  );
});
