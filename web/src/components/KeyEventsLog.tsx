import { useState } from 'preact/hooks';
import { keys as keysApi } from '../api/endpoints';
import type { KeyEvent } from '../api/types';
import { useResource } from '../lib/use-resource';
import { ErrorText } from './ErrorText';
import { Pager } from './Pager';
import { Time } from './Time';

const PAGE_SIZE = 20;

const ACTION_LABEL: Record<KeyEvent['action'], string> = {
  created: 'Created',
  updated: 'Updated',
  rotated: 'Rotated',
  revoked: 'Revoked',
};

const shown = (value: unknown): string => (value === null || value === undefined ? '—' : JSON.stringify(value));

/**
 * What an entry changed, one `field: before → after` per line. A rotation records the ids and prefixes
 * of both keys: it shows the new key's prefix, as the keys table does.
 */
function Changes({ event }: { event: KeyEvent }) {
  const { changes } = event;
  if (event.action === 'rotated') {
    const next: unknown = changes && 'key_prefix' in changes ? changes.key_prefix[1] : undefined;
    return typeof next === 'string' ? (
      <>
        New key <code>{next}…</code>
      </>
    ) : (
      <>—</>
    );
  }
  const entries = Object.entries(changes ?? {});
  if (entries.length === 0) return <>—</>;
  return (
    <ul class="changes">
      {entries.map(([field, [before, after]]) => (
        <li key={field}>
          <code>{field}</code>: {shown(before)} → {shown(after)}
        </li>
      ))}
    </ul>
  );
}

/** The audit log of the organization's keys, newest first, a page at a time; reloads when `changes` moves. */
export function KeyEventsLog({ changes }: { changes: number }) {
  const [offset, setOffset] = useState(0);
  const log = useResource(() => keysApi.events(PAGE_SIZE, offset), [offset, changes]);
  const page = log.data;

  return (
    <section aria-labelledby="key-events-heading">
      <div class="section-header">
        <h2 id="key-events-heading">Activity</h2>
        <button type="button" onClick={() => log.reload()} disabled={log.loading}>
          Reload<span class="visually-hidden"> activity</span>
        </button>
      </div>
      <p class="hint">Every create, update, rotation and revocation of your organization's keys, newest first.</p>
      <ErrorText error={log.error} />
      {page?.count === 0 && <p>No key changes yet.</p>}
      {page && page.count > 0 && (
        <>
          <table class="responsive-table key-events-table">
            <caption class="visually-hidden">Key changes, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Action</th>
                <th scope="col">Key</th>
                <th scope="col">Changes</th>
                <th scope="col">By</th>
                <th scope="col">Request</th>
              </tr>
            </thead>
            <tbody>
              {page.results.map((event) => (
                <tr key={event.id} data-event-id={event.id} data-action={event.action}>
                  <td data-label="When">
                    <Time iso={event.created_at} />
                  </td>
                  <th scope="row" data-label="Action">
                    {ACTION_LABEL[event.action]}
                  </th>
                  <td data-label="Key">
                    <code>{event.key_prefix}…</code>
                  </td>
                  <td data-label="Changes" data-field="changes">
                    <Changes event={event} />
                  </td>
                  <td data-label="By" data-field="actor">
                    <span>
                      {event.actor_email ?? (event.actor_user_id ? 'A deleted user' : '—')}
                      {event.ip && <span class="subtle"> from {event.ip}</span>}
                    </span>
                  </td>
                  <td data-label="Request">
                    {event.request_id ? <code class="request-id">{event.request_id}</code> : '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager
            offset={offset}
            pageSize={PAGE_SIZE}
            shown={page.results.length}
            count={page.count}
            hasOlder={page.next !== null}
            onOffset={setOffset}
          />
        </>
      )}
    </section>
  );
}
