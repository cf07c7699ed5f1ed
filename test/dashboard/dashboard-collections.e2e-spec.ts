import type { Page } from 'playwright-core';
import { signUp } from '../support/app.js';
import { addMember } from '../support/teams.js';
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
 * Collections in a real browser: made, filled, asked alone and with `default`, renamed, a key limited to
 * one, deleted after a confirmation; and a viewer who sees them but changes nothing. The tests run in
 * order and share one owner, signed in through the page.
 */

declare const localStorage: { setItem(key: string, value: string): void };

describe('dashboard in a real browser: collections', () => {
  let dashboard: Dashboard;
  const email = `collections-${Date.now()}@example.com`;
  const { shot, api, userJwt, keyRow, goTo, expectHeading } = dashboardHelpers(() => dashboard, email);
  let page: Page;
  const picker = () => page.getByLabel('Collection', { exact: true });
  const documentsStatus = () => page.locator('section[aria-labelledby="documents-heading"] [role="status"]');

  beforeAll(async () => {
    dashboard = await openDashboard();
    page = dashboard.page;
    const owner = await signUp(dashboard.test, email);
    // Something in `default` to ask alongside the new collection.
    await api()
      .post('/v1/documents/')
      .set(owner.auth)
      .send({ title: 'Office hours', content: 'The office opens at eight in the morning and closes at six.' })
      .expect(201);
    await page.goto(`${dashboard.base}/app/documents`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectHeading('Documents');
  }, SLOW);
  afterAll(() => closeDashboard(dashboard));

  it(
    'creates a collection (a duplicate name is refused), uploads into it and lists only its documents',
    async () => {
      // `default` is chosen and cannot be renamed or deleted.
      await page.getByRole('rowheader', { name: 'Office hours' }).waitFor();
      await expect(picker().locator('option:checked').textContent()).resolves.toBe('default (1 document)');
      await expect(page.getByRole('button', { name: /^Delete collection/ }).count()).resolves.toBe(0);
      await expect(page.getByRole('button', { name: /^Rename/ }).count()).resolves.toBe(0);

      await page.getByRole('button', { name: 'New collection' }).click();
      const dialog = page.getByRole('dialog', { name: 'New collection' });
      await dialog.getByLabel('Name').fill('DEFAULT');
      await dialog.getByRole('button', { name: 'Create collection' }).click();
      await dialog.getByText('A collection named "DEFAULT" already exists.').waitFor();
      await dialog.getByLabel('Name').fill('Customer Acme');
      await dialog.getByRole('button', { name: 'Create collection' }).click();
      await dialog.waitFor({ state: 'detached' });
      await expect(documentsStatus().textContent()).resolves.toBe('The collection “Customer Acme” was created.');
      await expect(picker().locator('option:checked').textContent()).resolves.toBe('Customer Acme (0 documents)');
      await page.getByText('No documents yet. Upload one above.').waitFor();
      await page.getByText('Into the collection “Customer Acme”.').waitFor();

      await page.getByLabel(/choose one/).setInputFiles({
        name: 'acme-contract.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('Acme pays its invoices within forty-five days of delivery.'),
      });
      await page.getByRole('button', { name: 'Upload' }).click();
      await page.getByRole('rowheader', { name: 'acme-contract.txt' }).waitFor({ timeout: 30_000 });
      await expect(picker().locator('option:checked').textContent()).resolves.toBe('Customer Acme (1 document)');
      await page.getByRole('heading', { name: 'Documents in Customer Acme (1)' }).waitFor();
      await expect(page.getByRole('rowheader', { name: 'Office hours' }).count()).resolves.toBe(0);
      await shot('collections');

      // Stored where the page said.
      const [, acme] = (
        await api()
          .get('/v1/collections/')
          .set(await userJwt())
          .expect(200)
      ).body.results;
      const listed = await api()
        .get(`/v1/documents/?collection_id=${acme.id}`)
        .set(await userJwt())
        .expect(200);
      expect(listed.body.results.map((d: { title: string }) => d.title)).toEqual(['acme-contract.txt']);

      // Back to `default`: its own document only.
      await picker().selectOption({ label: 'default (1 document)' });
      await page.getByRole('rowheader', { name: 'Office hours' }).waitFor();
      await expect(page.getByRole('rowheader', { name: 'acme-contract.txt' }).count()).resolves.toBe(0);
    },
    SLOW,
  );

  it(
    'asks the new collection alone, then together with default',
    async () => {
      await goTo('Ask');
      const chooser = page.getByTestId('new-collections');
      await expect(chooser.getByLabel('default').isChecked()).resolves.toBe(true);
      await chooser.getByLabel('default').uncheck();
      await page.getByText('Choose at least one collection.').waitFor();
      await expect(page.getByRole('button', { name: 'Ask', exact: true }).isDisabled()).resolves.toBe(true);
      await chooser.getByLabel('Customer Acme').check();
      await page.getByLabel('Question').fill('When does the office open, and when does Acme pay its invoices?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      const answer = page.locator('.message-assistant').last();
      await answer.locator('.sources').waitFor({ timeout: 30_000 });
      await expect(answer.locator('.source-title').allTextContents()).resolves.toEqual(['acme-contract.txt']);
      await expect(page.getByTestId('asking').textContent()).resolves.toBe(
        'Asking: Private knowledge base (Customer Acme)',
      );

      // The same conversation, now with `default` too: both collections answer.
      const more = page.getByTestId('conversation-collections');
      await more.getByLabel('default').check();
      await expect(page.getByTestId('asking').textContent()).resolves.toBe(
        'Asking: Private knowledge base (default, Customer Acme)',
      );
      await page.getByLabel('Question').fill('When does the office open, and when does Acme pay its invoices?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      const second = page.locator('.message-assistant').nth(1);
      await second.locator('.sources').waitFor({ timeout: 30_000 });
      const titles = await second.locator('.source-title').allTextContents();
      expect([...titles].sort()).toEqual(['Office hours', 'acme-contract.txt']);
      await shot('ask-collections');
    },
    SLOW,
  );

  it(
    'limits a key to the collection: its settings and the key list show it, and the key reaches nothing else',
    async () => {
      await goTo('API keys');
      await page.getByLabel('Name', { exact: true }).fill('acme only');
      await page.getByText('Scopes, limits and metadata').click();
      const form = page.locator('section', { has: page.locator('#create-key-heading') });
      await form.getByLabel('Only the collections chosen below').check();
      await form.getByRole('button', { name: 'Create key' }).click();
      // None chosen: the API's refusal under the field.
      await form.locator('#create-key-collections-error').waitFor();
      await form.getByTestId('create-key-key-collections').getByLabel('Customer Acme').check();
      await form.getByRole('button', { name: 'Create key' }).click();
      const secret = page.getByRole('dialog', { name: 'Key “acme only” created' });
      const key = await secret.getByLabel('API key').inputValue();
      await secret.getByRole('button', { name: 'I have stored the key' }).click();
      await secret.waitFor({ state: 'detached' });
      const row = keyRow('acme only');
      await eventually(
        () => row.locator('[data-field="access"]').textContent(),
        is<string | null>('All scopes · Collections: Customer Acme'),
      );
      await shot('keys-collections');

      // The settings dialog shows the choice.
      await row.getByRole('button', { name: /^Settings/ }).click();
      const settings = page.getByRole('dialog', { name: 'Settings of “acme only”' });
      await expect(settings.getByLabel('Only the collections chosen below').isChecked()).resolves.toBe(true);
      await expect(
        settings.getByTestId('settings-key-collections').getByLabel('Customer Acme').isChecked(),
      ).resolves.toBe(true);
      await expect(settings.getByTestId('settings-key-collections').getByLabel('default').isChecked()).resolves.toBe(
        false,
      );
      await settings.getByRole('button', { name: 'Cancel' }).click();

      // The key itself lists only the collection's documents.
      const documents = await api().get('/v1/documents/').set({ 'X-API-Key': key }).expect(200);
      expect(documents.body.results.map((d: { title: string }) => d.title)).toEqual(['acme-contract.txt']);
    },
    SLOW,
  );

  it(
    'renames the collection (the key list follows) and deletes it after a confirmation',
    async () => {
      await goTo('Documents');
      await picker().selectOption({ label: 'Customer Acme (1 document)' });
      await page.getByRole('button', { name: 'Rename Customer Acme' }).click();
      const dialog = page.getByRole('dialog', { name: 'Rename “Customer Acme”' });
      await dialog.getByLabel('Name').fill('Acme Corp');
      await dialog.getByRole('button', { name: 'Rename' }).click();
      await dialog.waitFor({ state: 'detached' });
      await expect(documentsStatus().textContent()).resolves.toBe('Renamed to “Acme Corp”.');
      await expect(picker().locator('option:checked').textContent()).resolves.toBe('Acme Corp (1 document)');

      await goTo('API keys');
      await eventually(
        () => keyRow('acme only').locator('[data-field="access"]').textContent(),
        is<string | null>('All scopes · Collections: Acme Corp'),
      );

      await goTo('Documents');
      await picker().selectOption({ label: 'Acme Corp (1 document)' });
      await page.getByRole('button', { name: 'Delete collection Acme Corp' }).click();
      const confirm = page.getByRole('alertdialog', { name: 'Delete the collection “Acme Corp”?' });
      await confirm.getByText('Its 1 document and their passages are deleted with it').waitFor();
      await shot('collection-delete');
      // Cancel keeps it.
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      await page.getByRole('rowheader', { name: 'acme-contract.txt' }).waitFor();
      await page.getByRole('button', { name: 'Delete collection Acme Corp' }).click();
      await confirm.getByRole('button', { name: 'Delete collection' }).click();
      await confirm.waitFor({ state: 'detached' });
      await expect(documentsStatus().textContent()).resolves.toBe('The collection “Acme Corp” was deleted.');
      await expect(picker().locator('option').allTextContents()).resolves.toEqual(['default (1 document)']);
      await page.getByRole('rowheader', { name: 'Office hours' }).waitFor();
      const left = await api()
        .get('/v1/collections/')
        .set(await userJwt())
        .expect(200);
      expect(left.body.results.map((c: { name: string }) => c.name)).toEqual(['default']);
    },
    SLOW,
  );

  it(
    'shows a viewer the collections and their documents, but no create, rename, delete or upload',
    async () => {
      const owner = { ...(await api().post('/auth/jwt/create/').send({ email, password: PASSWORD })).body };
      const auth = { Authorization: `Bearer ${owner.access}` };
      await api().post('/v1/collections/').set(auth).send({ name: 'Handbook' }).expect(201);
      const viewer = await addMember(dashboard.test, { id: '', email, password: PASSWORD, ...owner, auth }, 'viewer');
      const context = await dashboard.browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
      const seen = await context.newPage();
      seen.setDefaultTimeout(10_000);
      await seen.goto(`${dashboard.base}/app/`);
      await seen.evaluate((refresh) => localStorage.setItem('kqs.refresh', refresh), viewer.refresh);
      await seen.goto(`${dashboard.base}/app/documents`);
      await expectHeading('Documents', seen);
      await seen.getByRole('rowheader', { name: 'Office hours' }).waitFor();
      await seen.getByLabel('Collection', { exact: true }).selectOption({ label: 'Handbook (0 documents)' });
      await seen.getByText('No documents yet.', { exact: true }).waitFor();
      for (const name of [/^New collection/, /^Rename/, /^Delete/, /^Upload/])
        await expect(seen.getByRole('button', { name }).count()).resolves.toBe(0);
      await expect(seen.locator('#upload-heading').count()).resolves.toBe(0);
      await shot('collections-viewer', seen);
      await context.close();
    },
    SLOW,
  );

  it(
    'pages through a collection of more documents than one page holds',
    async () => {
      const auth = await userJwt();
      const paged = (await api().post('/v1/collections/').set(auth).send({ name: 'Paged' }).expect(201)).body
        .id as string;
      await api()
        .post('/v1/documents/batch/')
        .set(auth)
        .send({
          collection_id: paged,
          documents: Array.from({ length: 21 }, (_, i) => ({ title: `Page note ${i}`, content: `Note number ${i}.` })),
        })
        .expect(201);
      await page.reload();
      await expectHeading('Documents');
      await picker().selectOption({ label: 'Paged (21 documents)' });
      const pager = page.getByRole('navigation', { name: 'Document pages' });
      await expect(pager.locator('span').textContent()).resolves.toBe('1–20 of 21');
      await expect(pager.getByRole('button', { name: 'Previous' }).isDisabled()).resolves.toBe(true);
      await pager.getByRole('button', { name: 'Next' }).click();
      await eventually(() => pager.locator('span').textContent(), is<string | null>('21–21 of 21'));
      await expect(pager.getByRole('button', { name: 'Next' }).isDisabled()).resolves.toBe(true);
      await expect(page.locator('tbody tr').count()).resolves.toBe(1);
      await pager.getByRole('button', { name: 'Previous' }).click();
      await eventually(() => pager.locator('span').textContent(), is<string | null>('1–20 of 21'));
    },
    SLOW,
  );
});
