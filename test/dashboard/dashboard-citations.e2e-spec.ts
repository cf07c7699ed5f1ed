import { signUp } from '../support/app.js';
import { makePagedPdf } from '../support/knowledge.js';
import {
  type Dashboard,
  closeDashboard,
  dashboardHelpers,
  openDashboard,
  PASSWORD,
  SLOW,
} from '../support/dashboard.js';

// The page.evaluate callbacks run in the browser; this project's types have no DOM, so just these.
interface BrowserRect {
  top: number;
  bottom: number;
  width: number;
}
interface BrowserElement {
  textContent: string | null;
  getBoundingClientRect(): BrowserRect;
  getClientRects(): ArrayLike<BrowserRect>;
}
declare const document: {
  querySelector(selector: string): BrowserElement | null;
  querySelectorAll(selector: string): ArrayLike<BrowserElement>;
};

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
      // The passage is marked paragraph by paragraph.
      const marked = dialog.locator('mark.passage');
      await marked.first().waitFor();
      expect(await marked.allTextContents()).toContain(passage);
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

  /** Asks a question in a new private conversation; answers the source of `title`. */
  async function askForSource(question: string, title: string) {
    const { page } = dashboard;
    await goTo('Ask');
    await page.getByLabel('Knowledge base').selectOption('');
    await page.getByLabel('Question').fill(question);
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    const answer = page.locator('.message-assistant').last();
    await answer.locator('.sources').waitFor({ timeout: 30_000 });
    return answer.locator('.source', { has: page.locator('.source-title', { hasText: title }) }).first();
  }

  it(
    'shows a PDF passage on its own page, marked, with the other pages a click away; the list opens the PDF',
    async () => {
      const { page } = dashboard;
      await api()
        .post('/v1/documents/')
        .set(await userJwt())
        .field('title', 'Kitchen manual')
        .attach(
          'file',
          makePagedPdf([
            ['Welcome to the kitchen manual of the cafe.'],
            ['The dishwasher is emptied by the closing shift every night.'],
            ['Fire blankets hang beside the stove in the kitchen.'],
          ]),
          { filename: 'kitchen.pdf', contentType: 'application/pdf' },
        )
        .expect(201);

      const source = await askForSource('Who empties the dishwasher?', 'Kitchen manual');
      await source.getByRole('button', { name: 'Show in document (page 2)' }).click();
      const dialog = page.getByRole('dialog', { name: 'Kitchen manual' });
      await expect(dialog.getByTestId('page-number').textContent()).resolves.toBe('Page 2 of 3');
      const text = dialog.getByLabel('Text of page 2');
      await expect(text.textContent()).resolves.toBe('The dishwasher is emptied by the closing shift every night.');
      await expect(text.locator('mark.passage').allTextContents()).resolves.toEqual([
        'The dishwasher is emptied by the closing shift every night.',
      ]);
      await shot('ask-passage-pdf');
      await dialog.getByRole('button', { name: 'Next page' }).click();
      await expect(dialog.getByLabel('Text of page 3').textContent()).resolves.toBe(
        'Fire blankets hang beside the stove in the kitchen.',
      );
      await expect(dialog.locator('mark').count()).resolves.toBe(0);
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });

      // The documents list opens it too, on its first page.
      await goTo('Documents');
      await page.getByRole('rowheader', { name: 'Kitchen manual' }).getByRole('button').click();
      await expect(dialog.getByTestId('page-number').textContent()).resolves.toBe('Page 1 of 3');
      await expect(dialog.getByLabel('Text of page 1').textContent()).resolves.toBe(
        'Welcome to the kitchen manual of the cafe.',
      );
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
    },
    SLOW,
  );

  it(
    'marks a Markdown passage paragraph by paragraph: no highlight on the blank lines between them',
    async () => {
      const { page } = dashboard;
      const paragraphs = [
        '# Opening checklist',
        'Unlock the back door and switch on the grinder.',
        '- Count the till float.\n- Wipe the pastry counter.',
        'The opening barista signs the checklist by the till.',
      ];
      await api()
        .post('/v1/documents/')
        .set(await userJwt())
        .send({ title: 'Opening checklist', content: paragraphs.join('\n\n\n') })
        .expect(201);

      const source = await askForSource('Who signs the opening checklist?', 'Opening checklist');
      await source.getByRole('button', { name: 'Show in document' }).click();
      const dialog = page.getByRole('dialog', { name: 'Opening checklist' });
      await dialog.locator('mark.passage').first().waitFor();
      await expect(dialog.locator('mark.passage').allTextContents()).resolves.toEqual(paragraphs);
      // Every highlighted box holds text: none is a sliver on an empty line.
      const widths = await page.evaluate(() =>
        Array.from(document.querySelectorAll('mark.passage')).flatMap((mark) =>
          Array.from(mark.getClientRects()).map((rect) => rect.width),
        ),
      );
      expect(widths.length).toBeGreaterThanOrEqual(paragraphs.length);
      expect(Math.min(...widths)).toBeGreaterThan(20);
      await shot('ask-passage-markdown');
      await dialog.getByRole('button', { name: 'Close' }).click();
    },
    SLOW,
  );
});
