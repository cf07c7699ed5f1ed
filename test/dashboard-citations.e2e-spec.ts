import { signUp } from './support/app.js';
import {
  type Dashboard,
  closeDashboard,
  dashboardHelpers,
  openDashboard,
  PASSWORD,
  SLOW,
} from './support/dashboard.js';

// The page.evaluate callbacks run in the browser; this project's types have no DOM, so just these.
interface BrowserRect {
  top: number;
  bottom: number;
}
declare const document: { querySelector(selector: string): { getBoundingClientRect(): BrowserRect } | null };

/* The answer view opens a cited passage in its document, marked and scrolled into view. */
describe('dashboard in a real browser: located citations', () => {
  let dashboard: Dashboard;
  const email = `citations-${Date.now()}@example.com`;
  const { shot, api, userJwt, goTo, expectHeading } = dashboardHelpers(() => dashboard, email);
  const filler = Array.from(
    { length: 120 },
    (_, i) => `Paragraph ${i} 🌍 describes the café’s ordinary routine, nothing more to say here.`,
  ).join('\n\n');
  const passage = 'The espresso machine is descaled every Friday at noon.';

  beforeAll(async () => {
    dashboard = await openDashboard();
    const { page, base } = dashboard;
    await signUp(dashboard.test, email);
    await api()
      .post('/v1/documents/')
      .set(await userJwt())
      .send({ title: 'Café handbook', content: `${filler}\n\n${passage}\n\n${filler}` })
      .expect(201);
    await page.goto(`${base}/app/ask`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectHeading('Ask');
  }, SLOW);
  afterAll(() => closeDashboard(dashboard));

  it(
    'opens the cited passage highlighted in its document, scrolled into view',
    async () => {
      const { page } = dashboard;
      await goTo('Ask');
      await page.getByLabel('Knowledge base').selectOption('');
      await page.getByLabel('Question').fill('When is the espresso machine descaled?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      const answer = page.locator('.message-assistant').last();
      await answer.locator('.sources').waitFor({ timeout: 30_000 });

      await answer.getByRole('button', { name: 'Show in document' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Café handbook' });
      const marked = dialog.locator('mark.passage');
      await marked.waitFor();
      await expect(marked.textContent()).resolves.toContain(passage);
      // The whole document is shown, the passage inside it.
      await expect(dialog.getByLabel('Document text').textContent()).resolves.toContain('Paragraph 119 🌍');
      // Scrolled into view within the document's box.
      const inView = await page.evaluate(() => {
        const box = document.querySelector('.document-text')!.getBoundingClientRect();
        const mark = document.querySelector('mark.passage')!.getBoundingClientRect();
        return mark.top >= box.top && mark.top < box.bottom;
      });
      expect(inView).toBe(true);
      await shot('ask-passage');

      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
    },
    SLOW,
  );
});
