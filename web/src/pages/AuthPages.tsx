import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { accounts } from '../api/endpoints';
import { session } from '../api/session';
import { PageHeading } from '../components/PageHeading';
import { describedBy, ErrorText } from '../components/ErrorText';
import { Link } from '../router';
import { useAction } from '../lib/use-action';

interface CredentialsFormProps {
  mode: 'signin' | 'signup';
  onSubmit: (email: string, password: string) => Promise<void>;
}

function CredentialsForm({ mode, onSubmit }: CredentialsFormProps) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [showPassword, setShowPassword] = useState(false);
  const { busy, error, setError, run } = useAction();
  // Editing a field the last error was about starts a new attempt: that message goes.
  const edited = (field: string) => {
    if (error?.hasField(field)) setError(null);
  };
  const signup = mode === 'signup';

  async function submit(event: Event) {
    event.preventDefault();
    await run(() => onSubmit(email.trim(), password), { leaving: true });
  }

  const formError = error && Object.keys(error.fields).length === 0 ? 'auth-error' : undefined;
  return (
    <form onSubmit={submit} class="stack" aria-busy={busy}>
      <div class="field">
        <label for="email">E-mail</label>
        <input
          id="email"
          type="email"
          autoComplete={signup ? 'email' : 'username'}
          required
          value={email}
          onInput={(event) => {
            setEmail(event.currentTarget.value);
            edited('email');
          }}
          aria-invalid={error?.hasField('email') || undefined}
          aria-describedby={describedBy(error, 'email', 'email-error', formError)}
        />
        <ErrorText error={error} field="email" id="email-error" />
      </div>
      <div class="field">
        <label for="password">Password</label>
        <input
          id="password"
          // A union here trips Preact's per-type input props; both values are valid.
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed by web/tsconfig's Preact types
          type={(showPassword ? 'text' : 'password') as 'text'}
          autoComplete={signup ? 'new-password' : 'current-password'}
          required
          minLength={signup ? 8 : undefined}
          value={password}
          onInput={(event) => {
            setPassword(event.currentTarget.value);
            edited('password');
          }}
          aria-invalid={error?.hasField('password') || undefined}
          aria-describedby={
            [signup ? 'password-hint' : '', formError, error?.hasField('password') ? 'password-error' : '']
              .filter(Boolean)
              .join(' ') || undefined
          }
        />
        <ErrorText error={error} field="password" id="password-error" />
        {signup && (
          <p class="hint" id="password-hint">
            At least 8 characters, and not only digits.
          </p>
        )}
        <label class="checkbox">
          <input
            type="checkbox"
            checked={showPassword}
            onChange={(event) => setShowPassword(event.currentTarget.checked)}
          />{' '}
          Show password
        </label>
      </div>
      <ErrorText error={error} id="auth-error" besideFields={['email', 'password']} />
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Please wait…' : signup ? 'Create account' : 'Sign in'}
      </button>
    </form>
  );
}

function AuthLayout({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <main id="main" class="auth-page">
      <div class="auth-card">
        <p class="brand">Knowledge Query</p>
        <PageHeading title={title} />
        {children}
      </div>
    </main>
  );
}

export function SignInPage({ notice }: { notice?: string }) {
  return (
    <AuthLayout title="Sign in">
      {notice && (
        <p class="notice" role="alert">
          {notice}
        </p>
      )}
      <CredentialsForm mode="signin" onSubmit={(email, password) => session.signIn(email, password)} />
      <p>
        No account yet? <Link to="signup">Create one</Link>
      </p>
    </AuthLayout>
  );
}

export function SignUpPage() {
  return (
    <AuthLayout title="Create an account">
      <p>An account comes with its own organization, private knowledge base and monthly credits.</p>
      <CredentialsForm
        mode="signup"
        onSubmit={async (email, password) => {
          await accounts.register(email, password);
          await session.signIn(email, password);
        }}
      />
      <p>
        Already registered? <Link to="signin">Sign in</Link>
      </p>
    </AuthLayout>
  );
}
