import type { Page } from 'playwright-core';
import { signIn, signUp } from '../support/app.js';
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
import { ACCEPT, addMember, invite, MEMBERS } from '../support/teams.js';

/*
 * Teams in a real browser: the owner invites a second person by e-mail, who opens the link, signs in,
 * accepts, switches to the organization and sees what a viewer may do; the owner changes the role,
 * removes the member, transfers ownership and leaves. Each person has a browser context of their own.
 * The tests run in order and share the people.
 */

// The page.evaluate callbacks run in the browser; this project's types have no DOM, so just these.
declare const navigator: { clipboard: { readText(): Promise<string> } };
declare const document: { documentElement: { scrollWidth: number } };

describe('dashboard in a real browser: teams', () => {
  let dashboard: Dashboard;
  const stamp = Date.now();
  const ownerEmail = `team-owner-${stamp}@example.com`;
  const bobEmail = `team-bob-${stamp}@example.com`;
  const carolEmail = `team-carol-${stamp}@example.com`;
  const ORGANIZATION = 'Acme Research';
  const { shot, api, userJwt, expectHeading, goTo } = dashboardHelpers(() => dashboard, ownerEmail);
  let page: Page;
  let bob: Page;
  let link: string;

  const memberRow = (target: Page, email: string) =>
    target.locator('.members-table tbody tr', { has: target.getByRole('rowheader', { name: email }) });
  const teamStatus = (target: Page) => target.locator('section[aria-labelledby="members-heading"] > [role="status"]');
  const navLinks = (target: Page) =>
    target.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();

  /** A browser context of its own (its own storage), signed in as `email` at `path`. */
  async function personAt(path: string, email?: string): Promise<Page> {
    const context = await dashboard.browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    const opened = await context.newPage();
    opened.setDefaultTimeout(10_000);
    await opened.goto(`${dashboard.base}${path}`);
    if (email) await signInOn(opened, email);
    return opened;
  }
  async function signInOn(target: Page, email: string) {
    await target.getByLabel('E-mail').fill(email);
    await target.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await target.getByRole('button', { name: 'Sign in' }).click();
  }

  beforeAll(async () => {
    dashboard = await openDashboard();
    page = dashboard.page;
    const owner = await signUp(dashboard.test, ownerEmail);
    await api().patch('/v1/organizations/current/').set(owner.auth).send({ name: ORGANIZATION }).expect(200);
    await api()
      .post('/v1/documents/')
      .set(owner.auth)
      .send({ title: 'Team handbook', content: 'Every member reads the handbook before the first week ends.' })
      .expect(201);
    await signUp(dashboard.test, bobEmail);
    await signUp(dashboard.test, carolEmail);
    await page.goto(`${dashboard.base}/app/keys`);
    await signInOn(page, ownerEmail);
    await expectHeading('API keys');
  }, SLOW);
  afterAll(() => closeDashboard(dashboard));

  it(
    'invites by e-mail with a role: the link is shown once with a copy button, and listed as pending',
    async () => {
      // Alone in an organization, nothing changes: no switcher.
      await expect(page.locator('#organization-switcher').count()).resolves.toBe(0);
      await goTo('Team');
      expect(new URL(page.url()).pathname).toBe('/app/team');
      await expect(page.getByTestId('my-role').textContent()).resolves.toBe('Owner');
      await expect(memberRow(page, ownerEmail).locator('[data-field="role"]').textContent()).resolves.toBe('Owner');

      await page.getByLabel('E-mail').fill(bobEmail);
      await page.getByLabel('Role', { exact: true }).selectOption('viewer');
      await page.getByRole('button', { name: 'Invite' }).click();
      const dialog = page.getByRole('dialog', { name: `Invitation for ${bobEmail}` });
      await dialog.waitFor();
      link = await dialog.getByLabel('Invitation link').inputValue();
      expect(link).toMatch(new RegExp(`^${dashboard.base}/app/invitations/accept#inv_[0-9A-Za-z]{32}$`));
      await expect(dialog.textContent()).resolves.toContain('shown only once');
      await dialog.getByRole('button', { name: 'Copy' }).click();
      await dialog.getByText('Copied to the clipboard.').waitFor();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(link);
      await shot('team-invitation-link');
      await dialog.getByRole('button', { name: 'I have copied the link' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await page.content()).not.toContain(link.split('#')[1]);

      const pending = page.locator('.invitations-table tbody tr', {
        has: page.getByRole('rowheader', { name: bobEmail }),
      });
      await expect(pending.locator('[data-field="role"]').textContent()).resolves.toBe('Viewer');

      // The same address again: the API's 409, beside the form.
      await page.getByLabel('E-mail').fill(bobEmail);
      await page.getByRole('button', { name: 'Invite' }).click();
      await expect(page.locator('#invite-error').textContent()).resolves.toBe(
        'This e-mail already has a pending invitation to the organization.',
      );

      // Another invitation, revoked after a confirmation.
      const eve = `team-eve-${stamp}@example.com`;
      await page.getByLabel('E-mail').fill(eve);
      await page.getByLabel('Role', { exact: true }).selectOption('member');
      await page.getByRole('button', { name: 'Invite' }).click();
      await page
        .getByRole('dialog', { name: `Invitation for ${eve}` })
        .getByRole('button', { name: 'I have copied the link' })
        .click();
      await shot('team');
      await page.getByRole('button', { name: `Revoke the invitation of ${eve}` }).click();
      const confirm = page.getByRole('alertdialog', { name: `Revoke the invitation of ${eve}?` });
      await confirm.waitFor();
      await shot('team-invitation-revoke');
      await confirm.getByRole('button', { name: 'Revoke invitation' }).click();
      await confirm.waitFor({ state: 'detached' });
      await eventually(
        () => teamStatus(page).textContent(),
        is<string | null>(`The invitation of ${eve} was revoked.`),
      );
      await expect(page.locator('.invitations-table tbody tr').count()).resolves.toBe(1);
      const listed = await api()
        .get('/v1/organizations/current/invitations/')
        .set(await userJwt())
        .expect(200);
      expect((listed.body as { results: { email: string }[] }).results.map((item) => item.email)).toEqual([bobEmail]);
    },
    SLOW,
  );

  it(
    "refuses another user's account (403) and an unknown token (400) with the API's messages",
    async () => {
      const carol = await personAt(new URL(link).pathname + new URL(link).hash);
      try {
        await expectHeading('Sign in', carol);
        await carol
          .getByRole('alert')
          .filter({ hasText: 'Sign in with the e-mail address the invitation was sent to' })
          .waitFor();
        await signInOn(carol, carolEmail);
        await expectHeading('Accept an invitation', carol);
        await carol.getByRole('button', { name: 'Accept invitation' }).click();
        await expect(carol.locator('#accept-error').textContent()).resolves.toBe(
          'You do not have permission to perform this action.',
        );
        await carol.getByText('This invitation was sent to another e-mail address').waitFor();
        await shot('team-invitation-other-user', carol);

        await carol.goto(`${dashboard.base}/app/invitations/accept#inv_${'x'.repeat(32)}`);
        await expectHeading('Accept an invitation', carol);
        await carol.getByRole('button', { name: 'Accept invitation' }).click();
        await expect(carol.locator('#accept-error').textContent()).resolves.toBe(
          'This invitation is invalid or has expired.',
        );
      } finally {
        await carol.context().close();
      }
    },
    SLOW,
  );

  it(
    'the invited person opens the link, signs in, accepts and switches to the organization',
    async () => {
      bob = await personAt(new URL(link).pathname + new URL(link).hash, bobEmail);
      await expectHeading('Accept an invitation', bob);
      await bob.locator('section[aria-labelledby="accept-heading"]').getByText(bobEmail).waitFor();
      await shot('team-invitation-accept', bob);
      await bob.getByRole('button', { name: 'Accept invitation' }).click();
      await bob.getByRole('heading', { level: 2, name: `You joined ${ORGANIZATION}` }).waitFor();
      await expect(bob.getByRole('status').filter({ hasText: 'You are a viewer there.' }).count()).resolves.toBe(1);
      await shot('team-invitation-accepted', bob);

      await bob.getByRole('button', { name: `Switch to ${ORGANIZATION}` }).click();
      await expectHeading('Team', bob);
      const switcher = bob.getByRole('combobox', { name: 'Organization' });
      await eventually(
        () => switcher.locator('option:checked').textContent(),
        is<string | null>(`${ORGANIZATION} (Viewer)`),
      );
      await expect(bob.getByTestId('my-role').textContent()).resolves.toBe('Viewer');
      // A viewer reads the members, changes none of them, and may leave.
      await expect(bob.locator('#invite-email').count()).resolves.toBe(0);
      await expect(bob.locator('#invitations-heading').count()).resolves.toBe(0);
      await expect(memberRow(bob, ownerEmail).getByRole('button').count()).resolves.toBe(0);
      await memberRow(bob, bobEmail).getByRole('button', { name: 'Leave the organization' }).waitFor();
      await shot('team-viewer', bob);

      // The invitation is spent: the owner's pending list is empty, and the members list has Bob as a viewer.
      await page.reload();
      await expectHeading('Team');
      await page.getByText('No pending invitations.').waitFor();
      await expect(memberRow(page, bobEmail).getAttribute('data-role')).resolves.toBe('viewer');
    },
    SLOW,
  );

  it(
    'shows a viewer no upload, delete or key buttons, and none of the admin pages',
    async () => {
      await expect(navLinks(bob)).resolves.toEqual(['API keys', 'Usage', 'Ask', 'Documents', 'Team', 'Organization']);

      await bob.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
      await expectHeading('API keys', bob);
      await bob.getByText('No keys. Your role in this organization cannot create any.').waitFor();
      await expect(bob.locator('#create-key-heading').count()).resolves.toBe(0);
      await expect(bob.getByRole('heading', { name: 'Activity' }).count()).resolves.toBe(0);
      await shot('team-viewer-keys', bob);

      await bob.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Documents' }).click();
      await expectHeading('Documents', bob);
      const row = bob.locator('tbody tr', { has: bob.getByRole('button', { name: 'Team handbook' }) });
      await row.waitFor();
      await expect(row.getByRole('button', { name: /^Delete/ }).count()).resolves.toBe(0);
      await expect(bob.locator('#upload-heading').count()).resolves.toBe(0);
      await shot('team-viewer-documents', bob);

      await bob.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organization' }).click();
      await expectHeading('Organization', bob);
      await expect(bob.locator('#organization-name').count()).resolves.toBe(0);
      await expect(bob.getByTestId('allowed-domains').textContent()).resolves.toBe(
        'Every public domain may be queried.',
      );

      await bob.goto(`${dashboard.base}/app/webhooks`);
      await expectHeading('Not available with your role', bob);
    },
    SLOW,
  );

  it(
    "changes a member's role after a confirmation: the member's screens follow",
    async () => {
      const select = page.getByLabel(`Role of ${bobEmail}`);
      await select.selectOption('member');
      const confirm = page.getByRole('alertdialog', { name: `Make ${bobEmail} a member?` });
      await confirm.waitFor();
      // Until confirmed, the list still shows the current role.
      await expect(select.inputValue()).resolves.toBe('viewer');
      await shot('team-role-change');
      await confirm.getByRole('button', { name: 'Change role' }).click();
      await confirm.waitFor({ state: 'detached' });
      await eventually(() => teamStatus(page).textContent(), is<string | null>(`${bobEmail} is now a member.`));
      await expect(memberRow(page, bobEmail).getAttribute('data-role')).resolves.toBe('member');
      // The organization's activity (an admin's) shows it, with who did it.
      const changed = page.locator('.team-events-table tbody tr[data-action="member.role_changed"]').first();
      await eventually(
        () => changed.locator('[data-field="changes"]').textContent(),
        is<string | null>('role: viewer → member'),
      );
      await expect(changed.locator('[data-field="target"]').textContent()).resolves.toBe(bobEmail);
      await expect(changed.locator('[data-field="actor"]').textContent()).resolves.toContain(ownerEmail);
      await page.locator('.team-events-table tbody tr[data-action="member.joined"]').first().waitFor();
      await shot('team-activity');

      // Bob's next page reads the role again: a member uploads and makes keys.
      await bob.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Documents' }).click();
      await expectHeading('Documents', bob);
      await bob.locator('#upload-heading').waitFor();
      await bob.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
      await bob.locator('#create-key-heading').waitFor();
      await expect(navLinks(bob)).resolves.not.toContain('Webhooks');
      await bob.getByLabel('Name', { exact: true }).fill("Bob's laptop");
      await bob.getByRole('button', { name: 'Create key' }).click();
      await bob.getByRole('button', { name: 'I have stored the key' }).click();
      // A member sees its own keys, not the organization's, nor the audit log.
      await expect(bob.locator('#organization-keys-heading').count()).resolves.toBe(0);
      await expect(bob.locator('#key-events-heading').count()).resolves.toBe(0);

      // The owner sees every key of the organization, with who made it, and may revoke any.
      await goTo('API keys');
      const bobsKey = page.locator('.organization-keys-table tbody tr', {
        has: page.getByRole('rowheader', { name: "Bob's laptop" }),
      });
      await expect(bobsKey.locator('[data-field="created-by"]').textContent()).resolves.toBe(bobEmail);
      await shot('team-organization-keys');
      await bobsKey.getByRole('button', { name: `Revoke Bob's laptop of ${bobEmail}` }).click();
      const revoke = page.getByRole('alertdialog', { name: `Revoke “Bob's laptop” of ${bobEmail}?` });
      await revoke.getByRole('button', { name: 'Revoke key' }).click();
      await revoke.waitFor({ state: 'detached' });
      await eventually(() => bobsKey.getAttribute('data-status'), is<string | null>('revoked'));
      // Usage splits the period by member once there is more than one.
      await goTo('Usage');
      await eventually(
        () => page.locator('.member-usage-table tbody th').allTextContents(),
        (emails) => emails.includes(ownerEmail) && emails.includes(bobEmail),
      );
      await goTo('Team');
    },
    SLOW,
  );

  it(
    'switches between organizations in the header',
    async () => {
      const switcher = bob.getByRole('combobox', { name: 'Organization' });
      const own = `team-bob-${stamp}'s organization`;
      await switcher.selectOption({ label: `${own} (Owner)` });
      await eventually(() => switcher.locator('option:checked').textContent(), is<string | null>(`${own} (Owner)`));
      await expectHeading('API keys', bob);
      await eventually(() => navLinks(bob).then((links) => links.includes('Webhooks')), is(true));
      await shot('team-switcher', bob);
      const me = await api()
        .get('/auth/users/me/')
        .set((await signIn(dashboard.test, bobEmail, PASSWORD)).auth)
        .expect(200);
      // The next sign-in acts where Bob switched to last.
      expect(me.body).toMatchObject({ role: 'owner' });
      await switcher.selectOption({ label: `${ORGANIZATION} (Member)` });
      await eventually(
        () => switcher.locator('option:checked').textContent(),
        is<string | null>(`${ORGANIZATION} (Member)`),
      );
    },
    SLOW,
  );

  it(
    'fits a phone-sized screen: the switcher in the header, the members as cards',
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
        await small.goto(`${dashboard.base}/app/team`);
        await signInOn(small, bobEmail);
        await expectHeading('Team', small);
        await memberRow(small, bobEmail).waitFor();
        await small.getByRole('combobox', { name: 'Organization' }).waitFor();
        await expect(small.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
        await shot('team-phone', small);
      } finally {
        await phone.close();
      }
    },
    SLOW,
  );

  it(
    'removes a member after a confirmation',
    async () => {
      await memberRow(page, bobEmail)
        .getByRole('button', { name: `Remove ${bobEmail}` })
        .click();
      const confirm = page.getByRole('alertdialog', { name: `Remove ${bobEmail}?` });
      await confirm.waitFor();
      await shot('team-remove');
      await confirm.getByRole('button', { name: 'Remove member' }).click();
      await confirm.waitFor({ state: 'detached' });
      await eventually(
        () => teamStatus(page).textContent(),
        is<string | null>(`${bobEmail} was removed from the organization.`),
      );
      await expect(memberRow(page, bobEmail).count()).resolves.toBe(0);
      const members = await api()
        .get(MEMBERS)
        .set(await userJwt())
        .expect(200);
      expect((members.body as { results: { email: string }[] }).results.map((item) => item.email)).toEqual([
        ownerEmail,
      ]);
      await bob.context().close();
    },
    SLOW,
  );

  it(
    'transfers ownership, then the former owner (now an admin) leaves and continues in another organization of theirs',
    async () => {
      const owner = await signIn(dashboard.test, ownerEmail, PASSWORD);
      const dave = await addMember(dashboard.test, owner, 'member');
      // The owner also belongs to Carol's organization, as a member.
      const carol = await signIn(dashboard.test, carolEmail, PASSWORD);
      const { token } = await invite(dashboard.test, carol, ownerEmail, 'member');
      await api().post(ACCEPT).set(owner.auth).send({ token }).expect(200);
      await page.reload();
      await expectHeading('Team');
      await memberRow(page, dave.email)
        .getByRole('button', { name: `Make owner ${dave.email}` })
        .click();
      const confirm = page.getByRole('alertdialog', { name: `Make ${dave.email} the owner?` });
      await confirm.waitFor();
      await shot('team-transfer');
      await confirm.getByRole('button', { name: 'Transfer ownership' }).click();
      await confirm.waitFor({ state: 'detached' });
      await eventually(
        () => teamStatus(page).textContent(),
        is<string | null>(`${dave.email} is now the owner; you are an admin.`),
      );
      await expect(memberRow(page, dave.email).getAttribute('data-role')).resolves.toBe('owner');
      await expect(memberRow(page, ownerEmail).getAttribute('data-role')).resolves.toBe('admin');
      await expect(page.getByTestId('my-role').textContent()).resolves.toBe('Admin');
      // An admin no longer transfers, and cannot change the owner.
      await expect(page.getByRole('button', { name: /^Make owner/ }).count()).resolves.toBe(0);
      await expect(page.getByLabel(`Role of ${dave.email}`).count()).resolves.toBe(0);

      await memberRow(page, ownerEmail).getByRole('button', { name: 'Leave the organization' }).click();
      const leave = page.getByRole('alertdialog', { name: `Leave ${ORGANIZATION}?` });
      const carolsOrganization = `team-carol-${stamp}'s organization`;
      await leave.getByText(`You continue in ${carolsOrganization}.`).waitFor();
      await shot('team-leave');
      await leave.getByRole('button', { name: 'Leave organization' }).click();
      await leave.waitFor({ state: 'detached' });
      await eventually(() => page.getByTestId('my-role').textContent(), is<string | null>('Member'));
      await expect(page.locator('.lede strong').first().textContent()).resolves.toBe(carolsOrganization);
      await expect(memberRow(page, carolEmail).getAttribute('data-role')).resolves.toBe('owner');
      await expect(memberRow(page, ownerEmail).getAttribute('data-role')).resolves.toBe('member');
      // One organization left: no switcher. The one left lists only Dave.
      await expect(page.locator('#organization-switcher').count()).resolves.toBe(0);
      const members = await api().get(MEMBERS).set(dave.auth).expect(200);
      expect((members.body as { results: { email: string }[] }).results.map((item) => item.email)).toEqual([
        dave.email,
      ]);
    },
    SLOW,
  );
});
