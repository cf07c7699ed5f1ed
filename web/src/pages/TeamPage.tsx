import { useState } from 'preact/hooks';
import { team } from '../api/endpoints';
import { session } from '../api/session';
import type { AssignableRole, CreatedInvitation, Invitation, InvitationPage, Member, TeamRole } from '../api/types';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { describedBy, ErrorText } from '../components/ErrorText';
import { OneTimeSecretDialog } from '../components/OneTimeSecretDialog';
import { PageHeading } from '../components/PageHeading';
import { TeamActivity } from '../components/TeamActivity';
import { Time } from '../components/Time';
import { formatNumber } from '../lib/format';
import { invitationLink } from '../lib/invitation';
import { useStore } from '../lib/store';
import { useAction } from '../lib/use-action';
import { type Resource, useResource } from '../lib/use-resource';
import { currentUser, loadCurrentUser, roleAtLeast } from '../state';

const PAGE_SIZE = 50;

export const ROLE_LABEL: Record<TeamRole, string> = {
  owner: 'Owner',
  admin: 'Admin',
  member: 'Member',
  viewer: 'Viewer',
};

/** What each role given by an invitation or a change may do, as the contract's table says. */
const ROLE_HINT: Record<AssignableRole, string> = {
  admin: 'Admin: everything but transferring ownership: members, invitations, every key, webhooks, the audit log.',
  member: 'Member: upload and delete documents, create and manage their own API keys, ask.',
  viewer: 'Viewer: ask, search and read documents, members and usage; nothing is changed.',
};
const ASSIGNABLE: AssignableRole[] = ['admin', 'member', 'viewer'];

type Action =
  | { kind: 'role'; member: Member; role: AssignableRole }
  | { kind: 'remove'; member: Member }
  | { kind: 'leave'; member: Member }
  | { kind: 'transfer'; member: Member }
  | { kind: 'revoke'; invitation: Invitation };

export function TeamPage() {
  const user = useStore(currentUser);
  const role = user?.role;
  const admin = roleAtLeast(role, 'admin');
  const organization = user?.organizations.find((item) => item.id === user.organization_id);
  const members = useResource(() => team.members(PAGE_SIZE, 0), []);
  const [action, setAction] = useState<Action | null>(null);
  const [created, setCreated] = useState<CreatedInvitation | null>(null);
  const [status, setStatus] = useState('');
  // The pending invitations are an admin's to see.
  const invitations = useResource(() => (admin ? team.invitations(PAGE_SIZE, 0) : Promise.resolve(null)), [admin]);

  const open = (next: Action | null) => {
    setStatus('');
    setAction(next);
  };
  // Bumped after every change, so the activity shows it.
  const [changes, setChanges] = useState(0);
  const finish = async (message: string) => {
    setChanges((count) => count + 1);
    await Promise.all([members.reload(), loadCurrentUser()]);
    setAction(null);
    setStatus(message);
  };

  return (
    <>
      <PageHeading title="Team" />
      <p class="lede">
        {organization ? (
          <>
            The members of <strong>{organization.name}</strong>. Your role here:{' '}
            <strong data-testid="my-role">{ROLE_LABEL[organization.role]}</strong>.
          </>
        ) : (
          'The members of your organization.'
        )}{' '}
        Everyone shares its documents, keys and credits, each as far as their role allows.
      </p>

      {admin && (
        <InviteForm
          onStart={() => setStatus('')}
          onCreated={(invitation) => {
            // The dashboard sends no Idempotency-Key, so the answer is never a replay without its token.
            if (invitation.token) setCreated(invitation);
            else setStatus(invitation.token_withheld ?? 'The invitation was made; its link cannot be shown.');
            setChanges((count) => count + 1);
            void invitations.reload();
          }}
        />
      )}

      <section aria-labelledby="members-heading">
        <div class="section-header">
          <h2 id="members-heading">Members{members.data ? ` (${formatNumber(members.data.count)})` : ''}</h2>
          <button type="button" onClick={() => members.reload()} disabled={members.loading}>
            Refresh<span class="visually-hidden"> members</span>
          </button>
        </div>
        <p class="hint" role="status">
          {status}
        </p>
        <ErrorText error={members.error} />
        {members.data && user && (
          <MemberTable members={members.data.results} myId={user.id} myRole={role ?? 'viewer'} onAction={open} />
        )}
        {!members.data && members.loading && <p aria-live="polite">Loading members…</p>}
      </section>

      {admin && (
        <PendingInvitations list={invitations} onRevoke={(invitation) => open({ kind: 'revoke', invitation })} />
      )}

      {admin && <TeamActivity members={members.data?.results ?? []} changes={changes} />}

      {action?.kind === 'role' && (
        <ConfirmDialog
          title={`Make ${action.member.email} ${article(action.role)} ${ROLE_LABEL[action.role].toLowerCase()}?`}
          confirmLabel="Change role"
          onCancel={() => setAction(null)}
          onConfirm={async () => {
            await team.changeRole(action.member.user_id, action.role);
            await finish(
              `${action.member.email} is now ${article(action.role)} ${ROLE_LABEL[action.role].toLowerCase()}.`,
            );
          }}
        >
          <p>{ROLE_HINT[action.role]}</p>
          <p>It applies at once to their sessions and API keys.</p>
        </ConfirmDialog>
      )}
      {action?.kind === 'remove' && (
        <ConfirmDialog
          title={`Remove ${action.member.email}?`}
          confirmLabel="Remove member"
          danger
          onCancel={() => setAction(null)}
          onConfirm={async () => {
            await team.remove(action.member.user_id);
            await finish(`${action.member.email} was removed from the organization.`);
          }}
        >
          <p>
            They lose access to this organization at once: their sessions stop acting here and their API keys in it are
            revoked. Invite them again to bring them back.
          </p>
        </ConfirmDialog>
      )}
      {action?.kind === 'transfer' && (
        <ConfirmDialog
          title={`Make ${action.member.email} the owner?`}
          confirmLabel="Transfer ownership"
          danger
          onCancel={() => setAction(null)}
          onConfirm={async () => {
            await team.transferOwnership(action.member.user_id);
            await finish(`${action.member.email} is now the owner; you are an admin.`);
          }}
        >
          <p>
            An organization has one owner. You become an admin: only the new owner can give ownership back or transfer
            it again.
          </p>
        </ConfirmDialog>
      )}
      {action?.kind === 'leave' && user && (
        <LeaveDialog
          organizationName={organization?.name ?? 'this organization'}
          next={user.organizations.find((item) => item.id !== user.organization_id) ?? null}
          userId={user.id}
          onCancel={() => setAction(null)}
        />
      )}
      {action?.kind === 'revoke' && (
        <ConfirmDialog
          title={`Revoke the invitation of ${action.invitation.email}?`}
          confirmLabel="Revoke invitation"
          danger
          onCancel={() => setAction(null)}
          onConfirm={async () => {
            await team.revokeInvitation(action.invitation.id);
            await invitations.reload();
            setChanges((count) => count + 1);
            setAction(null);
            setStatus(`The invitation of ${action.invitation.email} was revoked.`);
          }}
        >
          <p>Its link stops working. You can invite the same address again.</p>
        </ConfirmDialog>
      )}

      {created?.token && (
        <OneTimeSecretDialog
          title={`Invitation for ${created.email}`}
          inputId="invitation-link"
          label="Invitation link"
          noun="link"
          value={invitationLink(created.token)}
          warning={
            <>
              <strong>Copy this link now: it is shown only once.</strong> Send it to {created.email}; whoever signs in
              with that address can join as {article(created.role)} {ROLE_LABEL[created.role].toLowerCase()} until{' '}
              <Time iso={created.expires_at} />.
            </>
          }
          hint="The service sends no e-mail. If the link is lost, revoke the invitation and invite again."
          closeLabel="I have copied the link"
          onClose={() => setCreated(null)}
        />
      )}
    </>
  );
}

const article = (role: TeamRole) => (role === 'admin' || role === 'owner' ? 'an' : 'a');

function InviteForm({
  onStart,
  onCreated,
}: {
  onStart: () => void;
  onCreated: (invitation: CreatedInvitation) => void;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<AssignableRole>('member');
  const { busy, error, setError, run } = useAction();

  async function submit(event: Event) {
    event.preventDefault();
    onStart();
    await run(async () => {
      const created = await team.invite(email.trim(), role);
      setEmail('');
      onCreated(created);
    });
  }

  return (
    <section aria-labelledby="invite-heading" class="card">
      <h2 id="invite-heading">Invite someone</h2>
      <form onSubmit={submit} class="stack">
        <div class="inline-form">
          <div class="field grow">
            <label for="invite-email">E-mail</label>
            <input
              id="invite-email"
              type="email"
              required
              maxLength={254}
              placeholder="colleague@example.com"
              value={email}
              onInput={(event) => {
                setEmail(event.currentTarget.value);
                if (error) setError(null);
              }}
              aria-invalid={error?.hasField('email') || undefined}
              aria-describedby={describedBy(error, 'email', 'invite-email-error')}
            />
            <ErrorText error={error} field="email" id="invite-email-error" />
          </div>
          <div class="field">
            <label for="invite-role">Role</label>
            <select
              id="invite-role"
              value={role}
              onChange={(event) => setRole(event.currentTarget.value as AssignableRole)}
              aria-describedby="invite-role-hint"
            >
              {ASSIGNABLE.map((item) => (
                <option key={item} value={item}>
                  {ROLE_LABEL[item]}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Inviting…' : 'Invite'}
          </button>
        </div>
        <p class="hint" id="invite-role-hint">
          {ROLE_HINT[role]} The invitation is a link, valid for 7 days, for that e-mail address only.
        </p>
        <ErrorText error={error} id="invite-error" besideFields={['email']} />
      </form>
    </section>
  );
}

function MemberTable({
  members,
  myId,
  myRole,
  onAction,
}: {
  members: Member[];
  myId: string;
  myRole: TeamRole;
  onAction: (action: Action) => void;
}) {
  const admin = roleAtLeast(myRole, 'admin');
  return (
    <table class="responsive-table members-table">
      <caption class="visually-hidden">Members of the organization, the owner first</caption>
      <thead>
        <tr>
          <th scope="col">Member</th>
          <th scope="col">Role</th>
          <th scope="col">Joined</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {members.map((member) => {
          const me = member.user_id === myId;
          const owner = member.role === 'owner';
          return (
            <tr key={member.user_id} data-user-id={member.user_id} data-role={member.role}>
              <th scope="row" data-label="Member">
                {member.email}
                {me && <span class="subtle"> (you)</span>}
              </th>
              <td data-label="Role" data-field="role">
                <span class={`badge badge-role-${member.role}`}>{ROLE_LABEL[member.role]}</span>
              </td>
              <td data-label="Joined">
                <Time iso={member.joined_at} />
              </td>
              <td class="actions">
                <div class="button-row">
                  {admin && !me && !owner && (
                    <RoleChooser member={member} onChoose={(role) => onAction({ kind: 'role', member, role })} />
                  )}
                  {myRole === 'owner' && !me && (
                    <button type="button" onClick={() => onAction({ kind: 'transfer', member })}>
                      Make owner<span class="visually-hidden"> {member.email}</span>
                    </button>
                  )}
                  {admin && !me && !owner && (
                    <button type="button" class="danger-outline" onClick={() => onAction({ kind: 'remove', member })}>
                      Remove<span class="visually-hidden"> {member.email}</span>
                    </button>
                  )}
                  {me && !owner && (
                    <button type="button" class="danger-outline" onClick={() => onAction({ kind: 'leave', member })}>
                      Leave the organization
                    </button>
                  )}
                </div>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** A role picker for one member: choosing another role asks for a confirmation. */
function RoleChooser({ member, onChoose }: { member: Member; onChoose: (role: AssignableRole) => void }) {
  const id = `role-${member.user_id}`;
  return (
    <span class="role-chooser">
      <label for={id} class="visually-hidden">
        Role of {member.email}
      </label>
      <select
        id={id}
        value={member.role}
        onChange={(event) => {
          const chosen = event.currentTarget.value as AssignableRole;
          // The list shows the current role until the change is confirmed.
          event.currentTarget.value = member.role;
          if (chosen !== member.role) onChoose(chosen);
        }}
      >
        {ASSIGNABLE.map((item) => (
          <option key={item} value={item}>
            {ROLE_LABEL[item]}
          </option>
        ))}
      </select>
    </span>
  );
}

function PendingInvitations({
  list,
  onRevoke,
}: {
  list: Resource<InvitationPage | null>;
  onRevoke: (invitation: Invitation) => void;
}) {
  const page = list.data;
  return (
    <section aria-labelledby="invitations-heading">
      <div class="section-header">
        <h2 id="invitations-heading">Pending invitations{page ? ` (${formatNumber(page.count)})` : ''}</h2>
      </div>
      <ErrorText error={list.error} />
      {page?.results.length === 0 && <p>No pending invitations.</p>}
      {page && page.results.length > 0 && (
        <table class="responsive-table invitations-table">
          <caption class="visually-hidden">Invitations neither accepted, revoked nor expired, newest first</caption>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Sent</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.results.map((invitation) => (
              <tr key={invitation.id} data-invitation-id={invitation.id}>
                <th scope="row" data-label="E-mail">
                  {invitation.email}
                </th>
                <td data-label="Role" data-field="role">
                  {ROLE_LABEL[invitation.role]}
                </td>
                <td data-label="Sent">
                  <Time iso={invitation.created_at} />
                </td>
                <td data-label="Expires">
                  <Time iso={invitation.expires_at} />
                </td>
                <td class="actions">
                  <button type="button" class="danger-outline" onClick={() => onRevoke(invitation)}>
                    Revoke<span class="visually-hidden"> the invitation of {invitation.email}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/**
 * Leaving: the tokens of this organization stop working the moment one leaves, so the new tokens (for
 * another organization of the person's) are taken first, and the leave is done with the old ones.
 */
function LeaveDialog({
  organizationName,
  next,
  userId,
  onCancel,
}: {
  organizationName: string;
  next: { id: string; name: string } | null;
  userId: string;
  onCancel: () => void;
}) {
  return (
    <ConfirmDialog
      title={`Leave ${organizationName}?`}
      confirmLabel="Leave organization"
      danger
      onCancel={onCancel}
      onConfirm={async () => {
        if (next) await session.switchOrganization(next.id, () => team.remove(userId));
        else {
          await team.remove(userId);
          await session.signOut();
        }
      }}
    >
      <p>
        You lose access to its documents, keys and credits at once, and your API keys in it are revoked. To come back,
        you need a new invitation.
      </p>
      <p>
        {next
          ? `You continue in ${next.name}.`
          : 'You belong to no other organization: you are signed out, and need an invitation to work here again.'}
      </p>
    </ConfirmDialog>
  );
}
