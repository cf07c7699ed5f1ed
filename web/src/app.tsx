import { useEffect, useRef } from 'preact/hooks';
import { session } from './api/session';
import { QuotaMeter } from './components/QuotaMeter';
import { AcceptInvitationPage } from './pages/AcceptInvitationPage';
import { AskPage } from './pages/AskPage';
import { SignInPage, SignUpPage } from './pages/AuthPages';
import { DocumentsPage } from './pages/DocumentsPage';
import { KeysPage } from './pages/KeysPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { OrganizationPage } from './pages/OrganizationPage';
import { TeamPage } from './pages/TeamPage';
import { UsagePage } from './pages/UsagePage';
import { WebhooksPage } from './pages/WebhooksPage';
import { Link, navigate, requestPageFocus, route } from './router';
import { formatDateTime } from './lib/format';
import { ACCEPT_PATH, pendingInvitation } from './lib/invitation';
import { useStore } from './lib/store';
import { useAction } from './lib/use-action';
import type { TeamRole } from './api/types';
import { ErrorText } from './components/ErrorText';
import { currentUser, loadCurrentUser, quota, reloadQuota, resetSignedInState, roleAtLeast } from './state';
import { ROLE_LABEL } from './pages/TeamPage';

/** The pages, each shown to the roles that may use it (`role`: the lowest). */
const NAV: { to: string; label: string; role?: TeamRole }[] = [
  { to: 'keys', label: 'API keys' },
  { to: 'usage', label: 'Usage' },
  { to: 'ask', label: 'Ask' },
  { to: 'documents', label: 'Documents' },
  { to: 'team', label: 'Team' },
  { to: 'webhooks', label: 'Webhooks', role: 'admin' },
  { to: 'organization', label: 'Organization' },
];

export function App() {
  const auth = useStore(session.state);
  const path = useStore(route);

  const firstRender = useRef(true);
  useEffect(() => {
    // Sign-in, sign-out and an expired session change the whole screen: move focus with it (but
    // leave it alone on the first load, where the browser's own start is right).
    if (!firstRender.current) requestPageFocus();
    firstRender.current = false;
    if (!auth.signedIn) resetSignedInState();
  }, [auth.signedIn]);

  const signedInOnAuthPage = auth.signedIn && (path === '' || path === 'signin' || path === 'signup');
  // Signed in (or up) from an invitation link: back to accepting it.
  const landing = signedInOnAuthPage && pendingInvitation() ? ACCEPT_PATH : 'keys';
  useEffect(() => {
    if (signedInOnAuthPage) navigate(landing, { replace: true });
  }, [signedInOnAuthPage]);

  if (!auth.signedIn) {
    if (path === 'signup') return <SignUpPage />;
    if (path === ACCEPT_PATH && pendingInvitation())
      return (
        <SignInPage notice="Sign in with the e-mail address the invitation was sent to (or create an account with it) to accept it." />
      );
    return <SignInPage notice={auth.notice} />;
  }
  return <Shell path={signedInOnAuthPage ? landing : path} />;
}

function page(path: string, role: TeamRole | undefined) {
  const [section, id] = path.split('/');
  if (path === ACCEPT_PATH) return <AcceptInvitationPage />;
  const needed = NAV.find((item) => item.to === section)?.role;
  if (needed && role && !roleAtLeast(role, needed)) return <NotFoundPage forbidden />;
  switch (section) {
    case 'keys':
      return <KeysPage />;
    case 'usage':
      return <UsagePage />;
    case 'ask':
      return <AskPage sessionId={id} />;
    case 'documents':
      return <DocumentsPage />;
    case 'team':
      return <TeamPage />;
    case 'webhooks':
      return role ? <WebhooksPage /> : null;
    case 'organization':
      return <OrganizationPage />;
    default:
      return <NotFoundPage />;
  }
}

function Shell({ path }: { path: string }) {
  const user = useStore(currentUser);
  const organization = useStore(session.organization);
  const section = path.split('/')[0];
  // Another organization (switched here or in another tab): everything is read again, each page anew.
  useEffect(() => {
    void reloadQuota();
  }, [organization]);
  // The role may have changed meanwhile (an admin changed it): read again on every page.
  useEffect(() => {
    void loadCurrentUser();
  }, [organization, section]);
  // On a phone the navigation scrolls sideways: keep the current page's link in sight.
  useEffect(() => {
    document
      .querySelector('nav[aria-label="Main"] a[aria-current="page"]')
      ?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [section]);

  return (
    <div class="shell">
      <a
        class="skip-link"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="topbar">
        <div class="topbar-inner">
          <Link to="keys" class="brand">
            Knowledge Query
          </Link>
          <nav aria-label="Main">
            <ul>
              {NAV.filter((item) => !item.role || roleAtLeast(user?.role, item.role)).map((item) => (
                <li key={item.to}>
                  <Link to={item.to} aria-current={section === item.to ? 'page' : undefined}>
                    {item.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <OrganizationSwitcher />
          <div class="account">
            <HeaderQuota />
            {user && (
              <span class="account-email" title={user.email}>
                {user.email}
              </span>
            )}
            <button type="button" onClick={() => session.signOut()}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <QuotaBanner />
      <main id="main" tabIndex={-1} key={organization ?? ''}>
        {page(path, user?.role)}
      </main>
    </div>
  );
}

/** The organizations the person belongs to, when more than one: choosing one acts in it from then on. */
function OrganizationSwitcher() {
  const user = useStore(currentUser);
  const { busy, error, run } = useAction();
  if (!user || user.organizations.length < 2) return null;
  return (
    <div class="org-switcher">
      <label for="organization-switcher" class="visually-hidden">
        Organization
      </label>
      <select
        id="organization-switcher"
        value={user.organization_id}
        disabled={busy}
        aria-describedby={error ? 'organization-switch-error' : undefined}
        onChange={(event) => {
          const chosen = event.currentTarget.value;
          event.currentTarget.value = user.organization_id;
          void run(() => session.switchOrganization(chosen));
        }}
      >
        {user.organizations.map((organization) => (
          <option key={organization.id} value={organization.id}>
            {organization.name} ({ROLE_LABEL[organization.role]})
          </option>
        ))}
      </select>
      <ErrorText error={error} id="organization-switch-error" />
    </div>
  );
}

function HeaderQuota() {
  const { subscription } = useStore(quota);
  if (!subscription) return null;
  return (
    <Link to="usage" class="header-quota">
      <QuotaMeter subscription={subscription} compact />
    </Link>
  );
}

function QuotaBanner() {
  const { subscription } = useStore(quota);
  if (!subscription || subscription.current_quota.credits_remaining > 0) return null;
  return (
    <div class="banner-wrap">
      <div class="banner" role="alert">
        <strong>Your credits for this period are used up.</strong> Queries and chat messages are refused until the quota
        resets {formatDateTime(subscription.current_quota.period_end)}. Keys, documents and settings still work.
      </div>
    </div>
  );
}
