import { useEffect, useState } from 'preact/hooks';
import { team } from '../api/endpoints';
import { session } from '../api/session';
import type { TeamRole } from '../api/types';
import { ApiError } from '../api/http';
import { ErrorText } from '../components/ErrorText';
import { PageHeading } from '../components/PageHeading';
import { forgetInvitation, pendingInvitation } from '../lib/invitation';
import { useStore } from '../lib/store';
import { useAction } from '../lib/use-action';
import { Link, navigate } from '../router';
import { currentUser, loadCurrentUser } from '../state';
import { ROLE_LABEL } from './TeamPage';

/** Why a refusal happened, in a person's words, beside the API's own message. */
const EXPLAINED: Record<number, string> = {
  400: 'Ask whoever invited you for a new invitation.',
  403: 'This invitation was sent to another e-mail address: sign in with that address to accept it.',
};

/** Where an invitation link lands (`/app/invitations/accept#inv_…`): accepted with the signed-in person's JWT. */
export function AcceptInvitationPage() {
  const user = useStore(currentUser);
  const [token, setToken] = useState(() => pendingInvitation());
  const [joined, setJoined] = useState<{ organizationId: string; role: TeamRole } | null>(null);
  const accept = useAction();
  // Another link opened in this tab changes only the fragment: that invitation is the one shown now.
  useEffect(() => {
    const follow = () => {
      setToken(pendingInvitation());
      setJoined(null);
      accept.setError(null);
    };
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  const switching = useAction();
  const joinedName = joined && user?.organizations.find((item) => item.id === joined.organizationId)?.name;

  async function acceptInvitation() {
    if (!token) return;
    await accept.run(async () => {
      const answer = await team.accept(token).catch((error: unknown) => {
        // Spent, revoked, expired or unknown: not worth coming back to after the next sign-in.
        if (error instanceof ApiError && error.status === 400) forgetInvitation();
        throw error;
      });
      forgetInvitation();
      await loadCurrentUser();
      setJoined({ organizationId: answer.organization_id, role: answer.role });
    });
  }

  return (
    <>
      <PageHeading title="Accept an invitation" />
      {!token && (
        <p class="error" role="alert">
          This link has no invitation in it. Open the link exactly as you received it.
        </p>
      )}
      {token && !joined && (
        <section class="card" aria-labelledby="accept-heading">
          <h2 id="accept-heading">Join an organization</h2>
          <p>
            You were invited to join an organization, with its documents, keys and credits. Accepting as{' '}
            <strong>{user?.email ?? 'you'}</strong> adds you with the role the invitation gives; your own organization
            stays yours.
          </p>
          {accept.error && (
            <div class="error-block">
              <ErrorText error={accept.error} id="accept-error" />
              {EXPLAINED[accept.error.status] && <p class="hint">{EXPLAINED[accept.error.status]}</p>}
            </div>
          )}
          <div class="button-row">
            <button type="button" class="primary" onClick={acceptInvitation} disabled={accept.busy}>
              {accept.busy ? 'Accepting…' : 'Accept invitation'}
            </button>
            <button
              type="button"
              onClick={() => {
                forgetInvitation();
                navigate('keys');
              }}
            >
              Not now
            </button>
          </div>
        </section>
      )}
      {joined && (
        <section class="card" aria-labelledby="joined-heading">
          <h2 id="joined-heading">You joined {joinedName ?? 'the organization'}</h2>
          <p role="status">
            You are {joined.role === 'admin' ? 'an' : 'a'} <strong>{ROLE_LABEL[joined.role].toLowerCase()}</strong>{' '}
            there. Switch to it to work in it; the organization switcher at the top changes it any time.
          </p>
          <ErrorText error={switching.error} id="switch-error" />
          <div class="button-row">
            <button
              type="button"
              class="primary"
              disabled={switching.busy}
              onClick={() =>
                void switching.run(async () => {
                  await session.switchOrganization(joined.organizationId);
                  navigate('team');
                })
              }
            >
              Switch to {joinedName ?? 'it'}
            </button>
            <Link to="keys" class="button">
              Stay here
            </Link>
          </div>
        </section>
      )}
    </>
  );
}
