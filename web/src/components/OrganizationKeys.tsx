import { useState } from 'preact/hooks';
import { organizationKeys } from '../api/endpoints';
import type { OrganizationKey } from '../api/types';
import { formatNumber } from '../lib/format';
import { useResource } from '../lib/use-resource';
import { useStore } from '../lib/store';
import { currentUser } from '../state';
import { keyStatus, STATUS_LABEL } from '../lib/key-status';
import { ConfirmDialog } from './ConfirmDialog';
import { ErrorText } from './ErrorText';
import { PageNav } from './Pager';
import { Time } from './Time';

const PAGE_SIZE = 20;

/**
 * Every key of the organization, whoever made it, for its admins and owner: who made each, and a
 * revoke for any of them. `changes` is bumped by the page after a change to its own keys.
 */
export function OrganizationKeys({ changes, onRevoked }: { changes: number; onRevoked: () => void }) {
  const [offset, setOffset] = useState(0);
  const list = useResource(() => organizationKeys.list(PAGE_SIZE, offset), [offset, changes]);
  const [revoking, setRevoking] = useState<OrganizationKey | null>(null);
  const [status, setStatus] = useState('');
  const page = list.data;
  const me = useStore(currentUser)?.id;
  // While every key is the caller's own (an organization of one), "Your keys" already shows them all.
  const onlyMine = page && page.count <= PAGE_SIZE && page.results.every((key) => key.created_by.user_id === me);
  if (onlyMine && !revoking) return null;

  return (
    <section aria-labelledby="organization-keys-heading">
      <div class="section-header">
        <h2 id="organization-keys-heading">
          Every key of the organization{page ? ` (${formatNumber(page.count)})` : ''}
        </h2>
        <button type="button" onClick={() => list.reload()} disabled={list.loading}>
          Refresh<span class="visually-hidden"> every key of the organization</span>
        </button>
      </div>
      <p class="hint">As an admin you see the keys every member made, and may revoke any of them.</p>
      <p class="hint" role="status">
        {status}
      </p>
      <ErrorText error={list.error} />
      {page && page.results.length > 0 && (
        <table class="responsive-table organization-keys-table">
          <caption class="visually-hidden">Every API key of the organization, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Status</th>
              <th scope="col">Made by</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.results.map((key) => {
              const state = keyStatus(key);
              return (
                <tr key={key.id} data-key-id={key.id} data-status={state}>
                  <th scope="row" data-label="Name">
                    {key.name}
                  </th>
                  <td data-label="Prefix">
                    <code>{key.key_prefix}…</code>
                  </td>
                  <td data-label="Status">
                    <span class={`badge badge-${state}`}>{STATUS_LABEL[state]}</span>
                  </td>
                  <td data-label="Made by" data-field="created-by">
                    {key.created_by.email ?? 'A deleted user'}
                  </td>
                  <td data-label="Created">
                    <Time iso={key.created_at} />
                  </td>
                  <td data-label="Last used">{key.last_used_at ? <Time iso={key.last_used_at} /> : 'Never'}</td>
                  <td class="actions">
                    {state === 'active' && (
                      <button
                        type="button"
                        class="danger-outline"
                        onClick={() => {
                          setStatus('');
                          setRevoking(key);
                        }}
                      >
                        Revoke
                        <span class="visually-hidden">
                          {' '}
                          {key.name} of {key.created_by.email}
                        </span>
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <PageNav
        label="Pages of the organization's keys"
        offset={offset}
        pageSize={PAGE_SIZE}
        page={page}
        onOffset={setOffset}
      />
      {revoking && (
        <ConfirmDialog
          title={`Revoke “${revoking.name}” of ${revoking.created_by.email ?? 'a deleted user'}?`}
          confirmLabel="Revoke key"
          danger
          onCancel={() => setRevoking(null)}
          onConfirm={async () => {
            await organizationKeys.revoke(revoking.id);
            await list.reload();
            setRevoking(null);
            setStatus(`“${revoking.name}” was revoked.`);
            onRevoked();
          }}
        >
          <p>
            Requests with <code>{revoking.key_prefix}…</code> are refused from now on. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
