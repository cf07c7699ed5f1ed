import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
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
 * The Webhooks page in a real browser, against a local receiver. Endpoints must be https on a public
 * address; WEBHOOK_ALLOW_PRIVATE_URLS=true lifts both rules, as in test/webhooks/webhooks.e2e-spec.ts, so the
 * receiver can be plain http on 127.0.0.1. The tests run in order and share one person.
 */

// The page.evaluate callbacks run in the browser; this project's types have no DOM, so just these.
declare const navigator: { clipboard: { readText(): Promise<string> } };
declare const document: {
  activeElement: { id: string } | null;
  documentElement: { scrollWidth: number };
  querySelectorAll(selector: string): ArrayLike<Box & { children: ArrayLike<Box & { textContent: string | null }> }>;
};
interface Box {
  getBoundingClientRect(): { left: number };
}

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Answers 200 "ok", or 500 "boom" on a path in `failing`; keeps every request. */
async function startReceiver() {
  const received: Received[] = [];
  const failing = new Set<string>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      received.push({
        path,
        headers: request.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString(),
      });
      if (failing.has(path)) response.writeHead(500).end('boom');
      else response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    failing,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    at: (path: string) => received.filter((request) => request.path === path),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('dashboard in a real browser: webhooks', () => {
  let dashboard: Dashboard;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const email = `webhooks-${Date.now()}@example.com`;
  const { shot, api, userJwt, expectHeading, goTo } = dashboardHelpers(() => dashboard, email);
  let page: Dashboard['page'];
  let mainUrl: string;
  let mainSecret: string;

  const endpointRow = (url: string) =>
    page.locator('.webhooks-table tbody tr', { has: page.getByRole('rowheader', { name: url }) });
  /** The deliveries shown, once they are those of the endpoint at `url`. */
  const deliveries = (url: string) =>
    page.locator('section[aria-labelledby="deliveries-heading"]', {
      has: page.getByRole('heading', { level: 2, name: `Deliveries to ${url}` }),
    });
  const deliveryRows = (url: string) => deliveries(url).locator('tbody tr');
  const listStatus = () => page.locator('section[aria-labelledby="webhooks-heading"] > [role="status"]');

  async function createThroughPage(url: string, events: string[], description = '') {
    await page.getByLabel('Endpoint URL').fill(url);
    for (const type of events) await page.getByRole('checkbox', { name: new RegExp(`^${type} `) }).check();
    await page.getByLabel('Description (optional)').fill(description);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    dashboard = await openDashboard({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' });
    page = dashboard.page;
    mainUrl = receiver.url('/hooks');
    await signUp(dashboard.test, email);
    await page.goto(`${dashboard.base}/app/keys`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectHeading('API keys');
  }, SLOW);
  afterAll(async () => {
    await closeDashboard(dashboard);
    await receiver?.close();
  });

  it(
    "shows the API's refusals under the field they name",
    async () => {
      await goTo('Webhooks');
      expect(new URL(page.url()).pathname).toBe('/app/webhooks');
      await page.getByText('No endpoints yet. Add one above.').waitFor();

      await createThroughPage('ftp://files.example.com/hooks', ['document.indexed']);
      const urlError = page.locator('.field', { has: page.locator('#webhook-url') }).locator('#webhook-url-error');
      await expect(urlError.textContent()).resolves.toBe('Must be an https URL.');
      await expect(page.getByLabel('Endpoint URL').getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(page.getByLabel('Endpoint URL').getAttribute('aria-describedby')).resolves.toBe(
        'webhook-url-hint webhook-url-error',
      );
      await expect(page.getByRole('alert').allTextContents()).resolves.toEqual(['Must be an https URL.']);
      await shot('webhook-refused');
      // A new URL is a new attempt: the message goes.
      await page.getByLabel('Endpoint URL').fill(mainUrl);
      await urlError.waitFor({ state: 'detached' });

      await page.getByRole('checkbox', { name: /^document\.indexed / }).uncheck();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await expect(page.locator('#webhook-events-error').textContent()).resolves.toBe('Give at least one event type.');
      const listed = await api()
        .get('/v1/webhooks/')
        .set(await userJwt())
        .expect(200);
      expect(listed.body).toEqual([]);
    },
    SLOW,
  );

  it(
    'creates an endpoint and shows its signing secret exactly once, with a copy button',
    async () => {
      await createThroughPage(mainUrl, ['document.indexed', 'api_key.created'], 'ci receiver');
      const dialog = page.getByRole('dialog', { name: 'Webhook endpoint created' });
      await dialog.waitFor();
      mainSecret = await dialog.getByLabel('Signing secret').inputValue();
      expect(mainSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      await expect(dialog.textContent()).resolves.toContain('shown only once');
      await dialog.getByRole('button', { name: 'Copy' }).click();
      await dialog.getByText('Copied to the clipboard.').waitFor();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(mainSecret);
      // Escape (twice: Chromium closes a dialog on a second Escape whatever the page does) keeps it open.
      await page.keyboard.press('Escape');
      await page.keyboard.press('Escape');
      await dialog.getByRole('alert').filter({ hasText: 'This secret will not be shown again.' }).waitFor();
      await shot('webhook-created');
      await dialog.getByRole('button', { name: 'I have stored the secret' }).click();
      await dialog.waitFor({ state: 'detached' });

      const row = endpointRow(mainUrl);
      await expect(row.locator('[data-field="events"] li').allTextContents()).resolves.toEqual([
        'document.indexed',
        'api_key.created',
      ]);
      await expect(row.locator('[data-field="status"]').textContent()).resolves.toBe('Enabled');
      await expect(row.locator('.webhook-description').textContent()).resolves.toBe('ci receiver');
      // The form is empty again, and the secret is gone for good: not in the page, not after a reload.
      await expect(page.getByLabel('Endpoint URL').inputValue()).resolves.toBe('');
      expect(await page.content()).not.toContain(mainSecret.slice(6));
      await page.reload();
      await expectHeading('Webhooks');
      await endpointRow(mainUrl).waitFor();
      expect(await page.content()).not.toContain(mainSecret.slice(6));
    },
    SLOW,
  );

  it(
    'sends a test event and shows its delivery with the attempt and the answer, signed for standardwebhooks',
    async () => {
      await endpointRow(mainUrl)
        .getByRole('button', { name: `Send test to ${mainUrl}` })
        .click();
      await eventually(
        () => listStatus().textContent(),
        is<string | null>(`A test event (ping) was queued for ${mainUrl}.`),
      );
      // The endpoint's deliveries open below the list, the heading focused.
      await deliveries(mainUrl).waitFor();
      await eventually(
        () => page.evaluate(() => document.activeElement?.id),
        is<string | undefined>('deliveries-heading'),
      );
      // No click: the list follows the delivery until it settles.
      const row = deliveryRows(mainUrl).first();
      await eventually(() => row.getAttribute('data-status'), is<string | null>('delivered'));
      await expect(row.getByRole('rowheader').textContent()).resolves.toBe('ping');
      await expect(row.locator('[data-field="status"]').textContent()).resolves.toBe('Delivered');
      await expect(row.locator('[data-field="attempts"]').textContent()).resolves.toBe('1');
      await expect(row.locator('[data-field="response-status"]').textContent()).resolves.toBe('HTTP 200');
      await expect(row.locator('[data-field="response-body"]').textContent()).resolves.toBe('ok');
      await expect(row.locator('[data-field="next-attempt"]').textContent()).resolves.toBe('—');

      const [ping] = receiver.at('/hooks');
      const event = new Webhook(mainSecret).verify(ping.body, ping.headers) as { type: string; data: object };
      expect(event.type).toBe('ping');
      expect(event.data).toEqual({ webhook_id: await endpointRow(mainUrl).getAttribute('data-webhook-id') });

      // A real event: a key created through the API is delivered and listed too.
      await api()
        .post('/v1/billings/api-keys/')
        .set(await userJwt())
        .send({ name: 'hooked' })
        .expect(201);
      await deliveries(mainUrl).getByRole('button', { name: 'Refresh deliveries' }).click();
      await eventually(
        async () => [
          await deliveryRows(mainUrl).count(),
          await deliveryRows(mainUrl).first().getAttribute('data-status'),
        ],
        (value) => value[0] === 2 && value[1] === 'delivered',
      );
      await expect(deliveryRows(mainUrl).first().getByRole('rowheader').textContent()).resolves.toBe('api_key.created');
      const created = receiver.at('/hooks')[1];
      expect(new Webhook(mainSecret).verify(created.body, created.headers)).toMatchObject({
        type: 'api_key.created',
        data: { name: 'hooked' },
      });
      await shot('webhooks');
    },
    SLOW,
  );

  it(
    'retries a failed delivery with the same webhook-id, after disabling and enabling the endpoint',
    async () => {
      const flakyUrl = receiver.url('/flaky');
      receiver.failing.add('/flaky');
      await createThroughPage(flakyUrl, ['usage.threshold']);
      const dialog = page.getByRole('dialog', { name: 'Webhook endpoint created' });
      const secret = await dialog.getByLabel('Signing secret').inputValue();
      await dialog.getByRole('button', { name: 'I have stored the secret' }).click();

      const row = endpointRow(flakyUrl);
      await row.getByRole('button', { name: `Send test to ${flakyUrl}` }).click();
      const delivery = deliveryRows(flakyUrl).first();
      await eventually(() => delivery.locator('[data-field="response-status"]').count(), is(1));
      await expect(delivery.locator('[data-field="response-status"]').textContent()).resolves.toBe('HTTP 500');
      await expect(delivery.locator('[data-field="response-body"]').textContent()).resolves.toBe('boom');
      await shot('webhook-deliveries-failing');

      // Disabling fails what still waits for it.
      await row.getByRole('button', { name: `Disable ${flakyUrl}` }).click();
      const confirm = page.getByRole('alertdialog', { name: `Disable ${flakyUrl}?` });
      await confirm.getByRole('button', { name: 'Disable endpoint' }).click();
      await confirm.waitFor({ state: 'detached' });
      await eventually(() => listStatus().textContent(), is<string | null>(`${flakyUrl} was disabled.`));
      await expect(row.locator('[data-field="status"]').textContent()).resolves.toBe('Disabled Disabled by a user.');
      await deliveries(flakyUrl).getByRole('button', { name: 'Refresh deliveries' }).click();
      await eventually(() => delivery.getAttribute('data-status'), is<string | null>('failed'));
      await expect(delivery.locator('[data-field="status"]').textContent()).resolves.toBe('Failed');
      const attempts = Number(await delivery.locator('[data-field="attempts"]').textContent());
      expect(attempts).toBeGreaterThanOrEqual(1);

      receiver.failing.delete('/flaky');
      await row.getByRole('button', { name: `Enable ${flakyUrl}` }).click();
      await eventually(() => row.getAttribute('data-status'), is<string | null>('enabled'));
      await delivery.getByRole('button', { name: 'Retry the ping delivery' }).click();
      await deliveries(flakyUrl).getByText('The ping delivery was queued to be sent again now.').waitFor();
      await eventually(() => delivery.getAttribute('data-status'), is<string | null>('delivered'));
      await expect(delivery.locator('[data-field="attempts"]').textContent()).resolves.toBe(String(attempts + 1));
      await expect(delivery.locator('[data-field="response-status"]').textContent()).resolves.toBe('HTTP 200');

      const sent = receiver.at('/flaky');
      expect(sent).toHaveLength(attempts + 1);
      expect(new Set(sent.map((request) => request.headers['webhook-id'])).size).toBe(1);
      for (const request of sent) new Webhook(secret).verify(request.body, request.headers);
    },
    SLOW,
  );

  it(
    'fits a phone-sized screen: endpoints and deliveries as cards, nothing wider than the screen',
    async () => {
      const phone = await dashboard.browser.newContext({
        viewport: { width: 390, height: 844 },
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
        locale: 'en-US',
      });
      const small = await phone.newPage();
      try {
        await small.goto(`${dashboard.base}/app/webhooks`);
        await small.getByLabel('E-mail').fill(email);
        await small.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await small.getByLabel('Password', { exact: true }).press('Enter');
        await expectHeading('Webhooks', small);
        const flakyUrl = receiver.url('/flaky');
        await small.getByRole('button', { name: `Deliveries to ${flakyUrl}` }).click();
        await small.locator('.deliveries-table tbody tr').first().waitFor();
        await expect(small.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
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
        await shot('webhooks-phone', small);
      } finally {
        await phone.close();
      }
    },
    SLOW,
  );

  it(
    'rotates the signing secret: the new one is shown once and both sign for a day',
    async () => {
      await endpointRow(mainUrl)
        .getByRole('button', { name: `Rotate secret of ${mainUrl}` })
        .click();
      const confirm = page.getByRole('alertdialog', { name: `Rotate the signing secret of ${mainUrl}?` });
      await confirm.waitFor();
      await shot('webhook-rotate');
      await confirm.getByRole('button', { name: 'Rotate secret' }).click();
      const reveal = page.getByRole('dialog', { name: `New signing secret for ${mainUrl}` });
      await reveal.waitFor();
      const rotated = await reveal.getByLabel('Signing secret').inputValue();
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(mainSecret);
      await expect(reveal.textContent()).resolves.toContain(
        'The previous secret keeps signing alongside it for 24 hours.',
      );
      await reveal.getByRole('button', { name: 'I have stored the secret' }).click();
      await reveal.waitFor({ state: 'detached' });
      await eventually(
        () => listStatus().textContent(),
        is<string | null>(`The signing secret of ${mainUrl} was rotated.`),
      );

      const before = receiver.at('/hooks').length;
      await endpointRow(mainUrl)
        .getByRole('button', { name: `Send test to ${mainUrl}` })
        .click();
      await eventually(() => Promise.resolve(receiver.at('/hooks').length), is(before + 1));
      const ping = receiver.at('/hooks')[before];
      for (const secret of [rotated, mainSecret])
        expect(new Webhook(secret).verify(ping.body, ping.headers)).toBeTruthy();
    },
    SLOW,
  );

  it(
    'deletes an endpoint after a confirmation',
    async () => {
      await endpointRow(mainUrl)
        .getByRole('button', { name: `Delete ${mainUrl}` })
        .click();
      const confirm = page.getByRole('alertdialog', { name: `Delete ${mainUrl}?` });
      await confirm.waitFor();
      await shot('webhook-delete');
      await confirm.getByRole('button', { name: 'Delete endpoint' }).click();
      await confirm.waitFor({ state: 'detached' });
      await eventually(() => listStatus().textContent(), is<string | null>(`${mainUrl} was deleted.`));
      await expect(endpointRow(mainUrl).count()).resolves.toBe(0);
      const listed = await api()
        .get('/v1/webhooks/')
        .set(await userJwt())
        .expect(200);
      expect((listed.body as { url: string }[]).map((endpoint) => endpoint.url)).toEqual([receiver.url('/flaky')]);
    },
    SLOW,
  );
});
