import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { ADMIN, signIn, type SignedInUser, startTestApp, type TestApp } from './app.js';

/*
 * The dashboard in Debian's Chromium, driven by playwright-core, against the real service on a fresh
 * database. Screenshots go to docs/screenshots/ with UPDATE_SCREENSHOTS=1 (npm run screenshots), else to
 * a temporary directory, so an ordinary test run leaves the checkout clean.
 */

// The page.evaluate callbacks run in the browser; this project's types have no DOM, so just these.
declare const document: unknown;
declare const axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
interface AxeViolation {
  id: string;
  help: string;
  nodes: { target: string[] }[];
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
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SLOW = 60_000;
export const PASSWORD = 'correct horse battery';

const run = promisify(execFile);
export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Reads until the value is accepted (the page updates asynchronously), or fails with the last one. */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeout = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(value)} after ${timeout} ms`);
    await sleep(100);
  }
}
export const is =
  <T>(expected: T) =>
  (value: T) =>
    value === expected;

/** Fails with axe-core's WCAG 2.1 A/AA findings for what the page shows now. */
async function expectAccessible(target: Page, screen: string): Promise<void> {
  // Evaluated through the DevTools protocol, so the page's content security policy does not block it.
  await target.evaluate(await readFile(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
  const { violations } = await target.evaluate(() =>
    axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
  );
  const findings = violations.map(
    (violation) =>
      `${violation.id} (${violation.help}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
  );
  expect({ screen, findings }).toEqual({ screen, findings: [] });
}

/** A fresh build of web/ into a private directory: no race with other test runs over web/dist. */
async function buildDashboard(): Promise<string> {
  const outDir = await mkdtemp(join(tmpdir(), 'kqs-dashboard-'));
  const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  await run(
    process.execPath,
    [vite, 'build', '--config', 'web/vite.config.ts', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'error'],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '' },
    },
  );
  return outDir;
}

/** `YYYY-MM-DD` in the local time zone, which the browser shares with this process. */
export function localDay(offsetDays: number): string {
  const day = new Date();
  day.setDate(day.getDate() + offsetDays);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}`;
}

export interface Dashboard {
  test: TestApp;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  base: string;
  admin: SignedInUser;
  screenshotDir: string;
  webDir: string;
}

/**
 * Builds the dashboard, starts the service on a fresh database (with `env` added to the tests'
 * settings) and opens one Chromium page on it.
 */
export async function openDashboard(env: Record<string, string> = {}): Promise<Dashboard> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const webDir = await buildDashboard();
  const screenshotDir = process.env.UPDATE_SCREENSHOTS
    ? join(ROOT, 'docs', 'screenshots')
    : await mkdtemp(join(tmpdir(), 'kqs-shots-'));
  await mkdir(screenshotDir, { recursive: true });
  // As the dashboard's deployment docs say: refresh tokens rotate.
  const test = await startTestApp({ DASHBOARD_DIR: webDir, JWT_ROTATE_REFRESH_TOKENS: 'true', ...env });
  const base = `http://127.0.0.1:${(test.server.address() as AddressInfo).port}`;
  const admin = await signIn(test, ADMIN.email, ADMIN.password);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { test, browser, context, page, base, admin, screenshotDir, webDir };
}

export async function closeDashboard(dashboard: Dashboard | undefined): Promise<void> {
  await dashboard?.browser.close();
  await dashboard?.test.close();
  if (dashboard?.webDir) await rm(dashboard.webDir, { recursive: true, force: true });
  if (dashboard?.screenshotDir && !process.env.UPDATE_SCREENSHOTS)
    await rm(dashboard.screenshotDir, { recursive: true, force: true });
}

/** The tests' shorthands, bound lazily to the dashboard that `beforeAll` opens and to the person's e-mail. */
export function dashboardHelpers(current: () => Dashboard, email: string) {
  const page = () => current().page;
  const expectHeading = (name: string, target: Page = page()) =>
    target.getByRole('heading', { level: 1, name }).waitFor();
  return {
    /** A screenshot of a main screen, which must also pass axe-core's checks. */
    shot: async (name: string, target: Page = page()) => {
      await target.screenshot({ path: join(current().screenshotDir, `${name}.png`), fullPage: true });
      await expectAccessible(target, name);
    },
    api: () => current().test.http(),
    userJwt: async () => (await signIn(current().test, email, PASSWORD)).auth,
    keyRow: (name: string, status = 'active'): Locator =>
      page().locator(`tr[data-status="${status}"]`, { has: page().getByRole('rowheader', { name, exact: true }) }),
    headerCreditsUsed: async () =>
      Number(await page().getByTestId('quota-compact').getByRole('meter').getAttribute('aria-valuenow')),
    goTo: async (label: string, heading = label) => {
      await page().getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
      await expectHeading(heading);
    },
    expectHeading,
  };
}
