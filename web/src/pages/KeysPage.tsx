import { useEffect, useRef, useState } from 'preact/hooks';
import { keys as keysApi } from '../api/endpoints';
import type { ApiKey } from '../api/types';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Dialog } from '../components/Dialog';
import { describedBy, ErrorText } from '../components/ErrorText';
import { KeyEventsLog } from '../components/KeyEventsLog';
import { KEY_SETTINGS_FIELDS, KeySettingsFields } from '../components/KeySettingsFields';
import { PageHeading } from '../components/PageHeading';
import { SecretKeyDialog } from '../components/SecretKeyDialog';
import { Time } from '../components/Time';
import { endOfLocalDay, localTimeZone, toDateInput } from '../lib/format';
import { accessSummary, draftOf, settingsOf } from '../lib/key-settings';
import { collectionNames, useCollections } from '../lib/collections';
import { keyStatus, STATUS_LABEL } from '../lib/key-status';
import { useRoleAtLeast } from '../state';
import { OrganizationKeys } from '../components/OrganizationKeys';
import { useResource } from '../lib/use-resource';
import { useAction } from '../lib/use-action';

/** What the rotate dialog offers for how long the replaced key keeps working (the API allows up to a day). */
const GRACE_PERIODS = [
  { seconds: 0, label: 'Stops at once' },
  { seconds: 300, label: '5 minutes' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours' },
];

interface Action {
  kind: 'settings' | 'expiry' | 'rotate' | 'revoke';
  key: ApiKey;
}

export function KeysPage() {
  const list = useResource(() => keysApi.list(), []);
  const [action, setAction] = useState<Action | null>(null);
  // After a rotation: the new key, and the id of the key it replaced.
  const [revealed, setRevealed] = useState<{ key: ApiKey; replaced: string | null } | null>(null);
  const [status, setStatus] = useState('');
  // A new action starts with no message from the previous one beside it.
  const open = (next: Action | null) => {
    setStatus('');
    setAction(next);
  };
  // Bumped after every change, so the audit log shows it.
  const [changes, setChanges] = useState(0);
  const changed = () => setChanges((count) => count + 1);
  // A viewer sees its keys (made while a member, say) but makes and changes none; the log is an admin's.
  const canManage = useRoleAtLeast('member');
  const admin = useRoleAtLeast('admin');

  const finish = async (message: string) => {
    changed();
    await list.reload();
    setAction(null);
    setStatus(message);
  };

  return (
    <>
      <PageHeading title="API keys" />
      <p class="lede">
        Keys let your servers call the API without a password: send one as the <code>X-API-Key</code> header. Each key
        is shown in full only once.
      </p>

      {canManage && (
        <CreateKeyForm
          onStart={() => setStatus('')}
          onCreated={(key) => {
            setRevealed({ key, replaced: null });
            changed();
            void list.reload();
          }}
        />
      )}

      <section aria-labelledby="keys-heading">
        <div class="section-header">
          <h2 id="keys-heading">Your keys</h2>
          <button type="button" onClick={() => list.reload()} disabled={list.loading}>
            Refresh
          </button>
        </div>
        <p class="hint" role="status">
          {status}
        </p>
        <ErrorText error={list.error} />
        {list.data?.length === 0 && (
          <p>
            {canManage
              ? 'No keys yet. Create one above.'
              : 'No keys. Your role in this organization cannot create any.'}
          </p>
        )}
        {list.data && list.data.length > 0 && <KeyTable keys={list.data} onAction={canManage ? open : null} />}
        {!list.data && list.loading && <p aria-live="polite">Loading keys…</p>}
      </section>

      {action?.kind === 'settings' && (
        <KeySettingsDialog
          apiKey={action.key}
          onCancel={() => setAction(null)}
          onSaved={(updated) => finish(`“${updated.name}” was saved.`)}
        />
      )}
      {action?.kind === 'expiry' && (
        <ExpiryDialog
          apiKey={action.key}
          onCancel={() => setAction(null)}
          onSaved={(updated) =>
            finish(
              updated.expires_at
                ? `“${updated.name}” now expires ${new Date(updated.expires_at).toLocaleString()}.`
                : `“${updated.name}” no longer expires.`,
            )
          }
        />
      )}
      {action?.kind === 'rotate' && (
        <RotateDialog
          apiKey={action.key}
          onCancel={() => setAction(null)}
          onRotated={async (replacement, graceSeconds) => {
            const old = `“${action.key.name}” was rotated: ${action.key.key_prefix}…`;
            const grace = GRACE_PERIODS.find((option) => option.seconds === graceSeconds);
            await finish(
              graceSeconds > 0 && grace ? `${old} keeps working for ${grace.label}.` : `${old} no longer works.`,
            );
            setRevealed({ key: replacement, replaced: action.key.id });
          }}
        />
      )}
      {action?.kind === 'revoke' && (
        <ConfirmDialog
          title={`Revoke “${action.key.name}”?`}
          confirmLabel="Revoke key"
          danger
          onCancel={() => setAction(null)}
          onConfirm={async () => {
            await keysApi.revoke(action.key.id);
            await finish(`“${action.key.name}” was revoked.`);
          }}
        >
          <p>
            Requests with <code>{action.key.key_prefix}…</code> are refused from now on. This cannot be undone; the key
            stays in the list as revoked.
          </p>
        </ConfirmDialog>
      )}
      {admin && (
        <OrganizationKeys
          changes={changes}
          onRevoked={() => {
            changed();
            void list.reload();
          }}
        />
      )}
      {admin && <KeyEventsLog changes={changes} />}

      {revealed && (
        <SecretKeyDialog
          apiKey={revealed.key}
          rotated={revealed.replaced !== null}
          graceUntil={list.data?.find((key) => key.id === revealed.replaced)?.grace_until}
          onClose={() => setRevealed(null)}
        />
      )}
    </>
  );
}

function RotateDialog({
  apiKey,
  onRotated,
  onCancel,
}: {
  apiKey: ApiKey;
  onRotated: (replacement: ApiKey, graceSeconds: number) => Promise<void>;
  onCancel: () => void;
}) {
  const [graceSeconds, setGraceSeconds] = useState(0);
  const prefix = <code>{apiKey.key_prefix}…</code>;
  return (
    <ConfirmDialog
      title={`Rotate “${apiKey.name}”?`}
      confirmLabel="Rotate key"
      onCancel={onCancel}
      onConfirm={async () => onRotated(await keysApi.rotate(apiKey.id, graceSeconds), graceSeconds)}
    >
      <p>A new key with the same name, expiry, scopes, limits and metadata is issued and shown once.</p>
      <div class="field">
        <label for="grace-period">The current key {prefix} keeps working</label>
        <select
          id="grace-period"
          value={graceSeconds}
          onChange={(event) => setGraceSeconds(Number(event.currentTarget.value))}
          aria-describedby="grace-period-hint"
        >
          {GRACE_PERIODS.map((option) => (
            <option key={option.seconds} value={option.seconds}>
              {option.label}
            </option>
          ))}
        </select>
        <p class="hint" id="grace-period-hint">
          {graceSeconds === 0
            ? 'It stops working immediately: update every place that uses it first.'
            : 'Time to deploy the new key; never past the key’s own expiry.'}
        </p>
      </div>
    </ConfirmDialog>
  );
}

function CreateKeyForm({ onStart, onCreated }: { onStart: () => void; onCreated: (key: ApiKey) => void }) {
  const [name, setName] = useState('');
  const [draft, setDraft] = useState(draftOf());
  const { busy, error, setError, run } = useAction();

  async function submit(event: Event) {
    event.preventDefault();
    onStart();
    await run(async () => {
      const created = await keysApi.create(name, settingsOf(draft));
      setName('');
      setDraft(draftOf());
      onCreated(created);
    });
  }

  return (
    <section aria-labelledby="create-key-heading" class="card">
      <h2 id="create-key-heading">Create a key</h2>
      <form onSubmit={submit}>
        <div class="inline-form">
          <div class="field grow">
            <label for="key-name">Name</label>
            <input
              id="key-name"
              required
              maxLength={100}
              placeholder="e.g. production server"
              value={name}
              onInput={(event) => {
                setName(event.currentTarget.value);
                // A new name is a new attempt: the message about the last one goes.
                if (error?.hasField('name')) setError(null);
              }}
              aria-invalid={error?.hasField('name') || undefined}
              aria-describedby={describedBy(error, 'name', 'create-key-name-error')}
            />
            <ErrorText error={error} field="name" id="create-key-name-error" />
          </div>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </div>
        <details>
          <summary>Scopes, limits and metadata</summary>
          <KeySettingsFields id="create-key" draft={draft} onChange={setDraft} error={error} />
        </details>
      </form>
      <ErrorText error={error} id="create-key-error" besideFields={['name', ...KEY_SETTINGS_FIELDS]} />
    </section>
  );
}

/** `onAction` null: the keys are only shown (a viewer's). */
function KeyTable({ keys, onAction }: { keys: ApiKey[]; onAction: ((action: Action) => void) | null }) {
  const collections = useCollections();
  const names = (ids: string[]) => collectionNames(ids, collections.data);
  return (
    <table class="responsive-table keys-table">
      <caption class="visually-hidden">Your API keys, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Prefix</th>
          <th scope="col">Status</th>
          <th scope="col">Access</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col">Expires</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => {
          const status = keyStatus(key);
          return (
            <tr key={key.id} id={`key-${key.id}`} data-key-id={key.id} data-status={status}>
              <th scope="row" data-label="Name">
                {key.name}
              </th>
              <td data-label="Prefix">
                <code>{key.key_prefix}…</code>
              </td>
              <td data-label="Status" data-field="status">
                <div class="key-status">
                  <span class={`badge badge-${status}`}>{STATUS_LABEL[status]}</span>
                  <RotationLinks apiKey={key} keys={keys} />
                </div>
              </td>
              <td data-label="Access" data-field="access" class="access">
                {accessSummary(key, names)}
              </td>
              <td data-label="Created">
                <Time iso={key.created_at} />
              </td>
              <td data-label="Last used" data-field="last-used">
                {key.last_used_at ? <Time iso={key.last_used_at} /> : 'Never'}
              </td>
              <td data-label="Expires" data-field="expires">
                {key.expires_at ? <Time iso={key.expires_at} /> : 'Never'}
              </td>
              <td class="actions">
                {status === 'active' && onAction && (
                  <div class="button-row">
                    <button type="button" onClick={() => onAction({ kind: 'settings', key })}>
                      Settings<span class="visually-hidden"> of {key.name}</span>
                    </button>
                    <button type="button" onClick={() => onAction({ kind: 'expiry', key })}>
                      Expiry<span class="visually-hidden"> of {key.name}</span>
                    </button>
                    <button type="button" onClick={() => onAction({ kind: 'rotate', key })}>
                      Rotate<span class="visually-hidden"> {key.name}</span>
                    </button>
                    <button type="button" class="danger-outline" onClick={() => onAction({ kind: 'revoke', key })}>
                      Revoke<span class="visually-hidden"> {key.name}</span>
                    </button>
                  </div>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** A rotated key and its successor point at each other, by prefix (they share the name). */
function RotationLinks({ apiKey, keys }: { apiKey: ApiKey; keys: ApiKey[] }) {
  const successor = apiKey.replaced_by ? keys.find((key) => key.id === apiKey.replaced_by) : undefined;
  const predecessor = keys.find((key) => key.replaced_by === apiKey.id);
  const graceUntil = apiKey.grace_until && Date.parse(apiKey.grace_until) > Date.now() ? apiKey.grace_until : null;
  return (
    <>
      {successor && (
        <span class="rotation" data-field="rotated-to">
          to <a href={`#key-${successor.id}`}>{successor.key_prefix}…</a>
          {graceUntil && (
            <>
              ; works until <Time iso={graceUntil} />
            </>
          )}
        </span>
      )}
      {predecessor && (
        <span class="rotation" data-field="rotated-from">
          replaces <a href={`#key-${predecessor.id}`}>{predecessor.key_prefix}…</a>
        </span>
      )}
    </>
  );
}

function ExpiryDialog({
  apiKey,
  onSaved,
  onCancel,
}: {
  apiKey: ApiKey;
  onSaved: (key: ApiKey) => Promise<void>;
  onCancel: () => void;
}) {
  const [day, setDay] = useState(apiKey.expires_at ? toDateInput(new Date(apiKey.expires_at)) : '');
  const { busy, error, run } = useAction();

  async function save(expiresAt: string | null) {
    await run(async () => onSaved(await keysApi.setExpiry(apiKey.id, expiresAt)), { leaving: true });
  }

  return (
    <Dialog title={`Expiry of “${apiKey.name}”`} onDismiss={onCancel}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void save(endOfLocalDay(day));
        }}
        class="stack"
      >
        <div class="field">
          <label for="expiry-date">Stops working at the end of</label>
          <input
            id="expiry-date"
            type="date"
            required
            min={toDateInput(new Date())}
            value={day}
            onInput={(event) => setDay(event.currentTarget.value)}
            aria-describedby={error ? 'expiry-hint expiry-error' : 'expiry-hint'}
            aria-invalid={error ? true : undefined}
            data-autofocus
          />
          <p class="hint" id="expiry-hint">
            At 23:59:59 that day, your time ({localTimeZone()}).{' '}
            {apiKey.expires_at ? (
              <>
                Now: <Time iso={apiKey.expires_at} />.
              </>
            ) : (
              'Now: never expires.'
            )}
          </p>
        </div>
        <ErrorText error={error} id="expiry-error" />
        <div class="buttons">
          <button type="submit" class="primary" disabled={busy}>
            Save expiry
          </button>
          {apiKey.expires_at && (
            <button type="button" onClick={() => save(null)} disabled={busy}>
              Remove expiry
            </button>
          )}
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function KeySettingsDialog({
  apiKey,
  onSaved,
  onCancel,
}: {
  apiKey: ApiKey;
  onSaved: (key: ApiKey) => Promise<void>;
  onCancel: () => void;
}) {
  const [name, setName] = useState(apiKey.name);
  const [draft, setDraft] = useState(draftOf(apiKey));
  const { busy, error, run } = useAction();
  const form = useRef<HTMLFormElement>(null);
  // The error sits next to its field, which may be scrolled out of the dialog's view.
  useEffect(() => {
    if (error) form.current?.querySelector('.error')?.scrollIntoView({ block: 'nearest' });
  }, [error]);

  return (
    <Dialog title={`Settings of “${apiKey.name}”`} onDismiss={onCancel}>
      <form
        ref={form}
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => onSaved(await keysApi.update(apiKey.id, { name, ...settingsOf(draft) })), {
            leaving: true,
          });
        }}
        class="stack"
      >
        <div class="field">
          <label for="settings-name">Name</label>
          <input
            id="settings-name"
            required
            maxLength={100}
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
            aria-invalid={error?.hasField('name') || undefined}
            aria-describedby={describedBy(error, 'name', 'settings-name-error')}
            data-autofocus
          />
          <ErrorText error={error} field="name" id="settings-name-error" />
        </div>
        <KeySettingsFields id="settings" draft={draft} onChange={setDraft} error={error} />
        <ErrorText error={error} id="settings-error" besideFields={['name', ...KEY_SETTINGS_FIELDS]} />
        <div class="buttons">
          <button type="submit" class="primary" disabled={busy}>
            Save settings
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
