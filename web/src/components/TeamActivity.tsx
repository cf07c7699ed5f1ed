import { useState } from 'preact/hooks';
import { organizationEvents } from '../api/endpoints';
import type { Member, OrganizationEvent } from '../api/types';
import { useResource } from '../lib/use-resource';
import { ErrorText } from './ErrorText';
import { Pager } from './Pager';
import { Time } from './Time';

const PAGE_SIZE = 20;

const ACTION_LABEL: Record<string, string> = {
  'member.invited': 'Invited',
  'member.joined': 'Joined',
  'member.role_changed': 'Role changed',
  'member.removed': 'Removed',
  'member.left': 'Left',
  'invitation.revoked': 'Invitation revoked',
  'ownership.transferred': 'Ownership transferred',
  'api_key.created': 'Key created',
  'api_key.updated': 'Key updated',
  'api_key.rotated': 'Key rotated',
  'api_key.revoked': 'Key revoked',
};

const shown = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** An entry's changes, one `field: before → after` (or `field: value`) per line. */
function Changes({ changes }: { changes: OrganizationEvent['changes'] }) {
  const entries = Object.entries(changes ?? {});
  if (entries.length === 0) return <>—</>;
  return (
    <ul class="changes">
      {entries.map(([field, value]) => (
        <li key={field}>
          <code>{field}</code>:{' '}
          {Array.isArray(value) && value.length === 2 ? `${shown(value[0])} → ${shown(value[1])}` : shown(value)}
        </li>
      ))}
    </ul>
  );
}

/**
 * The organization's audit log for its admins and owner (`GET /v1/organizations/current/events/`):
 * membership and key events, newest first. People are named by e-mail while they are members.
 */
export function TeamActivity({ members, changes }: { members: Member[]; changes: number }) {
  const [offset, setOffset] = useState(0);
  const log = useResource(() => organizationEvents.list(PAGE_SIZE, offset), [offset, changes]);
  const page = log.data;
  const who = (userId: string | null) =>
    userId === null ? '—' : (members.find((member) => member.user_id === userId)?.email ?? 'A former member');

  return (
    <section aria-labelledby="team-activity-heading">
      <div class="section-header">
        <h2 id="team-activity-heading">Activity</h2>
        <button type="button" onClick={() => log.reload()} disabled={log.loading}>
          Reload<span class="visually-hidden"> activity</span>
        </button>
      </div>
      <p class="hint">Invitations, joins, role changes, removals and key changes in the organization, newest first.</p>
      <ErrorText error={log.error} />
      {page?.count === 0 && <p>Nothing yet.</p>}
      {page && page.count > 0 && (
        <>
          <table class="responsive-table team-events-table">
            <caption class="visually-hidden">The organization's activity, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Action</th>
                <th scope="col">About</th>
                <th scope="col">Changes</th>
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {page.results.map((event) => (
                <tr key={event.id} data-action={event.action}>
                  <td data-label="When">
                    <Time iso={event.created_at} />
                  </td>
                  <th scope="row" data-label="Action">
                    {ACTION_LABEL[event.action] ?? event.action}
                  </th>
                  <td data-label="About" data-field="target">
                    {event.key_prefix ? <code>{event.key_prefix}…</code> : who(event.target_user_id)}
                  </td>
                  <td data-label="Changes" data-field="changes">
                    <Changes changes={event.changes} />
                  </td>
                  <td data-label="By" data-field="actor">
                    <span>
                      {who(event.actor_user_id)}
                      {event.ip && <span class="subtle"> from {event.ip}</span>}
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {page.count > PAGE_SIZE && (
            <Pager
              offset={offset}
              pageSize={PAGE_SIZE}
              shown={page.results.length}
              count={page.count}
              hasOlder={page.next !== null}
              onOffset={setOffset}
            />
          )}
        </>
      )}
    </section>
  );
}
