import type { Page } from 'playwright-core';
import { createKey, signIn, signUp } from '../support/app.js';
import {
  type Dashboard,
  closeDashboard,
  dashboardHelpers,
  eventually,
  is,
  openDashboard,
  PASSWORD,
  SLOW,
  sleep,
} from '../support/dashboard.js';

/*
 * Asking, documents, the organization, usage, the session and the phone layout in a real browser. The
 * tests run in order and share one person, signed in through the page, with one API key, `ci server`.
 */

// The page.evaluate callbacks run in the browser; this project's types have no DOM, so just these.
interface BrowserRect {
  top: number;
  bottom: number;
  left: number;
  height: number;
}
interface BrowserElement {
  textContent: string | null;
  children: ArrayLike<BrowserElement>;
  getBoundingClientRect(): BrowserRect;
  getScreenCTM?(): { a: number } | null;
  ownerSVGElement?: BrowserElement & { getScreenCTM(): { a: number } | null };
}
declare const document: {
  activeElement: { tagName: string; textContent: string | null } | null;
  documentElement: { scrollWidth: number };
  querySelector(selector: string): BrowserElement | null;
  querySelectorAll(selector: string): ArrayLike<BrowserElement>;
};
declare const getComputedStyle: (element: BrowserElement) => { fontSize: string };
declare const localStorage: {
  readonly length: number;
  key(index: number): string | null;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
};
declare const File: new (parts: string[], name: string, options: { type: string }) => object;
declare const DataTransfer: new () => { items: { add(file: object): void } };

describe('dashboard in a real browser: knowledge, usage and the session', () => {
  let dashboard: Dashboard;
  const email = `dashboard-${Date.now()}@example.com`;
  const { shot, api, userJwt, headerCreditsUsed, goTo, expectHeading } = dashboardHelpers(() => dashboard, email);
  let test: Dashboard['test'];
  let browser: Dashboard['browser'];
  let page: Dashboard['page'];
  let base: string;
  let admin: Dashboard['admin'];

  beforeAll(async () => {
    dashboard = await openDashboard();
    ({ test, browser, page, base, admin } = dashboard);
    // The sign-up and the key that the other dashboard file makes through the page, made here by the API.
    await createKey(test, await signUp(test, email), 'ci server');
    await page.goto(`${base}/app/keys`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectHeading('API keys');
  }, SLOW);
  afterAll(() => closeDashboard(dashboard));

  describe('knowledge', () => {
    const slug = `handbook-${Date.now().toString(36)}`;

    beforeAll(async () => {
      await api()
        .post('/v1/domains/')
        .set(admin.auth)
        .send({ name: 'Staff handbook', slug, description: 'Policies for staff.' })
        .expect(201);
      await api()
        .post(`/v1/domains/${slug}/documents/`)
        .set(admin.auth)
        .send({
          title: 'Holiday policy',
          content:
            'Every employee gets thirty days of paid holiday per year. Unused holiday days carry over until March.',
          metadata: { section: 'leave', version: 3 },
        })
        .expect(201);
      await api()
        .post(`/v1/domains/${slug}/documents/`)
        .set(admin.auth)
        .send({
          title: 'Expenses',
          content: 'Travel expenses are reimbursed within two weeks when receipts are attached.',
        })
        .expect(201);
    }, SLOW);

    it(
      'asks a public domain, shows the answer with its sources, and the quota meter falls',
      async () => {
        await goTo('Ask');
        await page.getByTestId('quota-compact').waitFor();
        const usedBefore = await headerCreditsUsed();
        // No documents yet: the private knowledge base invites an upload, which leads to the Documents page.
        const empty = page.getByTestId('no-documents');
        await empty.getByText('Your private knowledge base has no documents yet.').waitFor();
        await shot('ask-empty');
        await empty.getByRole('link', { name: 'Upload a document' }).click();
        await expectHeading('Documents');
        await goTo('Ask');
        await page.getByLabel('Knowledge base').selectOption(slug);
        await empty.waitFor({ state: 'detached' });
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
        await page
          .getByRole('complementary')
          .getByRole('link', { name: /How many days of paid holiday/ })
          .waitFor();

        // A follow-up in the same conversation, sent with Enter.
        await page.getByLabel('Question').fill('Do unused days carry over?');
        await page.getByLabel('Question').press('Enter');
        await eventually(() => page.locator('.message-assistant:not([aria-busy="true"])').count(), is(2), 30_000);
        await eventually(headerCreditsUsed, is(usedBefore + 2));
      },
      SLOW,
    );

    it(
      'uploads a private document by drag and drop, lists it, and deletes it',
      async () => {
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
        const status = page.locator('section[aria-labelledby="documents-heading"] [role="status"]');
        await expect(status.textContent()).resolves.toBe('“onboarding.md” was added (1 chunk).');
        // The next failure replaces the success message rather than standing next to it.
        await page.getByRole('button', { name: 'Upload' }).click();
        await expect(page.locator('#upload-error').textContent()).resolves.toBe(
          'Choose a file to upload, or drop one on the box.',
        );
        await expect(status.textContent()).resolves.toBe('');

        // The list opens a document.
        await row.getByRole('button', { name: 'onboarding.md', exact: true }).click();
        const viewer = page.getByRole('dialog', { name: 'onboarding.md' });
        await expect(viewer.getByLabel('Document text').textContent()).resolves.toContain(
          'New starters receive a laptop on their first day',
        );
        await shot('document-viewer');
        await viewer.getByRole('button', { name: 'Close' }).click();
        await viewer.waitFor({ state: 'detached' });

        // A second one through the file chooser, with a title.
        await page.getByLabel(/choose one/).setInputFiles({
          name: 'security.txt',
          mimeType: 'text/plain',
          buffer: Buffer.from('Badges must be worn at all times in the office.'),
        });
        await page.getByLabel('Title (optional)').fill('Security rules');
        await page.getByRole('button', { name: 'Upload' }).click();
        await page.getByRole('rowheader', { name: 'Security rules' }).waitFor({ timeout: 30_000 });
        await shot('documents');

        // The private knowledge base answers from it.
        await goTo('Ask');
        await page.getByLabel('Knowledge base').selectOption('');
        await page.getByLabel('Question').fill('What do new starters receive on their first day?');
        await page.getByRole('button', { name: 'Ask', exact: true }).click();
        await expect(
          page.locator('.message-assistant .source-title').first().textContent({ timeout: 30_000 }),
        ).resolves.toBe('onboarding.md');

        await goTo('Documents');
        await page.getByRole('button', { name: 'Delete Security rules' }).click();
        await page.getByRole('alertdialog').getByRole('button', { name: 'Delete document' }).click();
        await page.getByRole('rowheader', { name: 'Security rules' }).waitFor({ state: 'detached' });
        await page.getByRole('rowheader', { name: 'onboarding.md' }).waitFor();
      },
      SLOW,
    );

    it(
      'renames the organization and restricts its domains, which the Ask page follows',
      async () => {
        await goTo('Organization');
        await page.getByLabel('Organization name').fill('Acme Research');
        await page.getByRole('button', { name: 'Rename' }).click();
        await page.getByText('The name was saved.').waitFor();

        await page.getByLabel('Only the domains selected below').check();
        await page
          .getByRole('group', { name: 'Domains', exact: true })
          .getByLabel(/Staff handbook/)
          .waitFor();
        await page.getByRole('button', { name: 'Save allowed domains' }).click();
        await page.getByText('Allowed domains were saved.').waitFor();
        const organization = (
          await api()
            .get('/v1/organizations/current/')
            .set(await userJwt())
            .expect(200)
        ).body;
        expect(organization).toMatchObject({ name: 'Acme Research', allowed_domains: [] });
        await shot('organization');

        await goTo('Ask');
        await page.locator('#knowledge-base[aria-busy="false"]').waitFor();
        await expect(page.getByLabel('Knowledge base').locator('option').allTextContents()).resolves.toEqual([
          'Private knowledge base (your documents)',
        ]);

        await goTo('Organization');
        await page.getByLabel('Only the domains selected below').check();
        await page
          .getByRole('group', { name: 'Domains', exact: true })
          .getByLabel(/Staff handbook/)
          .check();
        await page.getByRole('button', { name: 'Save allowed domains' }).click();
        await page.getByText('Allowed domains were saved.').waitFor();
        const allowed = (
          await api()
            .get('/v1/organizations/current/')
            .set(await userJwt())
            .expect(200)
        ).body;
        expect(allowed.allowed_domains).toEqual([slug]);
      },
      SLOW,
    );
  });

  describe('usage', () => {
    it(
      "shows the quota meter and today's credits in the chart",
      async () => {
        await goTo('Usage');
        const meter = page.getByTestId('quota').getByRole('meter');
        await eventually(() => meter.getAttribute('aria-valuenow'), is<string | null>('3'));
        await expect(meter.getAttribute('aria-valuetext')).resolves.toMatch(/^3 of [\d,]+ credits used/);
        const bars = page.locator('.chart-bar');
        await eventually(() => bars.count(), is(1));
        await expect(bars.first().locator('title').textContent()).resolves.toMatch(/: 3 credits$/);
        await shot('usage');
      },
      SLOW,
    );

    it(
      'shows a banner when the quota is used up, and the 402 detail where a question was asked',
      async () => {
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
        await api()
          .patch(`/v1/billings/organizations/${me.organization_id}/subscription/`)
          .set(admin.auth)
          .send({ monthly_credits: 1000 })
          .expect(200);
      },
      SLOW,
    );
  });

  describe('session', () => {
    const storedRefresh = (target: Page = page) => target.evaluate(() => localStorage.getItem('kqs.refresh'));
    const claimsOf = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { token_type?: string };
    const listRefused = { detail: 'Given token not valid for any token type', code: 'token_not_valid' };

    it(
      'keeps only the refresh token in localStorage, never the access token',
      async () => {
        await page.goto(`${base}/app/keys`);
        await page.getByRole('rowheader', { name: 'ci server' }).first().waitFor();
        const stored = await page.evaluate(() =>
          Array.from({ length: localStorage.length }, (_, i) => localStorage.getItem(localStorage.key(i)!) ?? ''),
        );
        expect(stored.join(' ')).not.toMatch(/access/);
        const tokens = stored.filter((value) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(value));
        expect(tokens.map((token) => claimsOf(token).token_type)).toEqual(['refresh']);
      },
      SLOW,
    );

    it(
      'refreshes the access token shortly before it expires, and stores the rotated refresh token',
      async () => {
        // A context of its own (a fake clock applies to a whole context), with a sign-in of its own.
        const { refresh } = await signIn(test, email, PASSWORD);
        const clockedContext = await browser.newContext({
          storageState: {
            cookies: [],
            origins: [{ origin: base, localStorage: [{ name: 'kqs.refresh', value: refresh }] }],
          },
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
          await eventually(
            () => storedRefresh(clocked),
            (stored) => stored !== before && stored !== null,
          );
        } finally {
          await clockedContext.close();
        }
      },
      SLOW,
    );

    it(
      'gets a new access token after a reload from the refresh token alone',
      async () => {
        const before = await storedRefresh();
        const refreshed = page.waitForResponse((response) => response.url().endsWith('/auth/jwt/refresh/'));
        await page.reload();
        expect((await refreshed).status()).toBe(200);
        await page.getByRole('rowheader', { name: 'ci server' }).first().waitFor();
        expect(await storedRefresh()).not.toBe(before);
      },
      SLOW,
    );

    it(
      'retries once with a new access token when the API answers 401',
      async () => {
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
      },
      SLOW,
    );

    it(
      'returns to sign-in with a message when the session has expired',
      async () => {
        await api()
          .post('/auth/jwt/logout/')
          .send({ refresh: await storedRefresh() })
          .expect(204); // as if it expired
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
      },
      SLOW,
    );

    it(
      'signs out and revokes the refresh token',
      async () => {
        const refresh = (await storedRefresh())!;
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByText('You have signed out.').waitFor();
        expect(await storedRefresh()).toBeNull();
        await eventually(async () => (await api().post('/auth/jwt/refresh/').send({ refresh })).status, is(401));
      },
      SLOW,
    );

    it(
      'signs out everywhere from the Organization page: every session of the person ends',
      async () => {
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
      },
      SLOW,
    );
  });

  describe('on a phone', () => {
    it(
      'fits a phone-sized screen, keyboard first',
      async () => {
        const phone = await browser.newContext({
          viewport: { width: 390, height: 844 },
          deviceScaleFactor: 2,
          isMobile: true,
          hasTouch: true,
          locale: 'en-US',
        });
        const small = await phone.newPage();
        try {
          await small.goto(`${base}/app/keys`);
          await small.getByLabel('E-mail').fill(email);
          await small.getByLabel('Password', { exact: true }).fill(PASSWORD);
          await small.getByLabel('Password', { exact: true }).press('Enter');
          await expectHeading('API keys', small);
          await small.getByRole('rowheader', { name: 'ci server' }).first().waitFor();
          await small.locator('.key-events-table tbody tr').first().waitFor();
          await shot('keys-phone', small);
          // Each card's values start beside their labels (a label column 6.5rem wide), none below one.
          const misplaced = await small.evaluate(() =>
            Array.from(document.querySelectorAll('.responsive-table td[data-label]')).flatMap((cell) => {
              const box = cell.getBoundingClientRect();
              return Array.from(cell.children)
                .filter((child) => child.getBoundingClientRect().left < box.left + 104)
                .map((child) => child.textContent);
            }),
          );
          expect(misplaced).toEqual([]);
          // Nothing on any page is wider than the screen.
          for (const [label, heading] of [
            ['Usage', 'Usage'],
            ['Documents', 'Documents'],
            ['Organization', 'Organization'],
            ['Ask', 'Ask'],
            ['API keys', 'API keys'],
          ]) {
            await small
              .getByRole('navigation', { name: 'Main' })
              .getByRole('link', { name: label, exact: true })
              .click();
            await expectHeading(heading, small);
            await sleep(300);
            await expect(small.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
            // The brand, the account and the navigation in two rows, not four.
            const header = (await small.locator('header.topbar').boundingBox())!;
            expect({ heading, headerFits: header.height <= 112 }).toEqual({ heading, headerFits: true });
            // The current page's link is in sight in the sideways-scrolling navigation.
            const current = (await small
              .getByRole('navigation', { name: 'Main' })
              .locator('a[aria-current="page"]')
              .boundingBox())!;
            expect(current.x >= 0 && current.x + current.width <= 390).toBe(true);
          }

          // The usage charts' text is drawn at its own size, not scaled down to fit.
          await small
            .getByRole('navigation', { name: 'Main' })
            .getByRole('link', { name: 'Usage', exact: true })
            .click();
          await expectHeading('Usage', small);
          await small.locator('.key-usage svg').waitFor();
          await small.locator('.chart-label').first().waitFor();
          const smallestText = await small.evaluate(() =>
            Math.min(
              ...Array.from(document.querySelectorAll('.chart svg text')).map(
                (text) => parseFloat(getComputedStyle(text).fontSize) * (text.ownerSVGElement!.getScreenCTM()?.a ?? 1),
              ),
            ),
          );
          expect(smallestText).toBeGreaterThanOrEqual(10);
          await shot('usage-phone', small);

          // Keyboard: the skip link comes first, and a page change moves focus to the new heading.
          const focused = () =>
            small.evaluate(
              () => `${String(document.activeElement?.tagName)}:${String(document.activeElement?.textContent)}`,
            );
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
      },
      SLOW,
    );
  });
});
