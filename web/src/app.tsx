import { useEffect, useRef } from 'preact/hooks';
import { session } from './api/session';
import { QuotaMeter } from './components/QuotaMeter';
import { AskPage } from './pages/AskPage';
import { SignInPage, SignUpPage } from './pages/AuthPages';
import { DocumentsPage } from './pages/DocumentsPage';
import { KeysPage } from './pages/KeysPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { OrganizationPage } from './pages/OrganizationPage';
import { UsagePage } from './pages/UsagePage';
import { WebhooksPage } from './pages/WebhooksPage';
import { Link, navigate, requestPageFocus, route } from './router';
import { formatDateTime } from './lib/format';
import { useStore } from './lib/store';
import { currentUser, loadCurrentUser, quota, reloadQuota, resetSignedInState } from './state';

const NAV = [
  { to: 'keys', label: 'API keys' },
  { to: 'usage', label: 'Usage' },
  { to: 'ask', label: 'Ask' },
  { to: 'documents', label: 'Documents' },
  { to: 'webhooks', label: 'Webhooks' },
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
  useEffect(() => {
    if (signedInOnAuthPage) navigate('keys', { replace: true });
  }, [signedInOnAuthPage]);

  if (!auth.signedIn) return path === 'signup' ? <SignUpPage /> : <SignInPage notice={auth.notice} />;
  return <Shell path={signedInOnAuthPage ? 'keys' : path} />;
}

function page(path: string) {
  const [section, id] = path.split('/');
  switch (section) {
    case 'keys':
      return <KeysPage />;
    case 'usage':
      return <UsagePage />;
    case 'ask':
      return <AskPage sessionId={id} />;
    case 'documents':
      return <DocumentsPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'organization':
      return <OrganizationPage />;
    default:
      return <NotFoundPage />;
  }
}

function Shell({ path }: { path: string }) {
  const user = useStore(currentUser);
  const section = path.split('/')[0];
  useEffect(() => {
    void loadCurrentUser();
    void reloadQuota();
  }, []);
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
              {NAV.map((item) => (
                <li key={item.to}>
                  <Link to={item.to} aria-current={section === item.to ? 'page' : undefined}>
                    {item.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
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
      <main id="main" tabIndex={-1}>
        {page(path)}
      </main>
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
