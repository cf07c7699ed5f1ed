import { useEffect, useRef, useState } from 'preact/hooks';
import { webhooks as webhooksApi } from '../api/endpoints';
import type { Webhook, WebhookDelivery, WebhookEventType } from '../api/types';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { describedBy, ErrorText } from '../components/ErrorText';
import { OneTimeSecretDialog } from '../components/OneTimeSecretDialog';
import { PageHeading } from '../components/PageHeading';
import { PageNav } from '../components/Pager';
import { Time } from '../components/Time';
import { formatNumber } from '../lib/format';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';

/** Every event type an endpoint may subscribe to, in the contract's order, with when it is sent. */
const EVENT_TYPES: Record<WebhookEventType, string> = {
  'document.indexed': 'A private document was stored and indexed',
  'document.failed': 'A document could not be read or indexed',
  'document.deleted': 'A private document was deleted',
  'api_key.created': 'An API key was created',
  'api_key.revoked': 'An API key was revoked',
  'api_key.rotated': 'An API key was rotated',
  'api_key.expiring': 'An API key expires in 7 days, then in 1 day',
  'usage.threshold': 'Credits reached 80 % or 100 % of the quota or of a key’s cap',
  'member.joined': 'A member joined the organization',
  'member.removed': 'A member was removed from the organization',
};
const EVENT_LIST = Object.keys(EVENT_TYPES) as WebhookEventType[];

/** The API's names of the create form's fields: their errors are shown next to them. */
const CREATE_FIELDS = ['url', 'events', 'description'];

const DELIVERY_PAGE_SIZE = 20;
/** While a delivery is being sent, or due within this long, its list refreshes itself. */
const SOON_MS = 15_000;
const POLL_MS = 1_000;
/** How much of the receiver's answer a table cell shows; the rest (up to the stored 1 KB) folds out. */
const SHORT_BODY = 120;

const DELIVERY_STATUS: Record<WebhookDelivery['status'], { label: string; badge: string }> = {
  pending: { label: 'Pending', badge: 'badge-expired' },
  sending: { label: 'Sending', badge: 'badge-rotated' },
  delivered: { label: 'Delivered', badge: 'badge-active' },
  failed: { label: 'Failed', badge: 'badge-failed' },
};

interface Action {
  kind: 'rotate' | 'disable' | 'delete';
  endpoint: Webhook;
}

/** A secret to show once: a new endpoint's, or a rotation's. */
interface Revealed {
  endpoint: Webhook;
  secret: string;
  rotated: boolean;
}

export function WebhooksPage() {
  const list = useResource(() => webhooksApi.list(), []);
  const [action, setAction] = useState<Action | null>(null);
  const [revealed, setRevealed] = useState<Revealed | null>(null);
  const [status, setStatus] = useState('');
  // The endpoint whose deliveries are shown, and a counter bumped to reload them.
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [deliveriesVersion, setDeliveriesVersion] = useState(0);
  const rowAction = useAction();
  const deliveriesHeading = useRef<HTMLHeadingElement>(null);
  const [focusDeliveries, setFocusDeliveries] = useState(false);
  const selected = list.data?.find((endpoint) => endpoint.id === selectedId) ?? null;

  useEffect(() => {
    if (focusDeliveries && selected) {
      deliveriesHeading.current?.focus();
      setFocusDeliveries(false);
    }
  }, [focusDeliveries, selected]);

  // A new action starts with no message from the previous one beside it.
  const open = (next: Action | null) => {
    setStatus('');
    rowAction.setError(null);
    setAction(next);
  };
  const showDeliveries = (endpoint: Webhook) => {
    setSelectedId(endpoint.id);
    setDeliveriesVersion((version) => version + 1);
    setFocusDeliveries(true);
  };
  const finish = async (message: string) => {
    await list.reload();
    setAction(null);
    setStatus(message);
  };

  async function sendTest(endpoint: Webhook) {
    setStatus('');
    const sent = await rowAction.run(() => webhooksApi.test(endpoint.id));
    if (!sent) return;
    setStatus(`A test event (ping) was queued for ${endpoint.url}.`);
    showDeliveries(endpoint);
  }

  async function enable(endpoint: Webhook) {
    setStatus('');
    const enabled = await rowAction.run(() => webhooksApi.update(endpoint.id, { enabled: true }));
    if (enabled) await finish(`${endpoint.url} was enabled.`);
  }

  return (
    <>
      <PageHeading title="Webhooks" />
      <p class="lede">
        Instead of polling, let the service POST events to your server: a document indexed, a key about to expire,
        credits at 80 %. Each delivery is signed per <a href="https://www.standardwebhooks.com/">Standard Webhooks</a>{' '}
        with the endpoint’s secret, shown once.
      </p>

      <CreateWebhookForm
        onStart={() => setStatus('')}
        onCreated={(endpoint, secret) => {
          setRevealed({ endpoint, secret, rotated: false });
          void list.reload();
        }}
      />

      <section aria-labelledby="webhooks-heading">
        <div class="section-header">
          <h2 id="webhooks-heading">Your endpoints</h2>
          <button type="button" onClick={() => list.reload()} disabled={list.loading}>
            Refresh
          </button>
        </div>
        <p class="hint" role="status">
          {status}
        </p>
        <ErrorText error={list.error} />
        <ErrorText error={rowAction.error} id="webhook-action-error" />
        {list.data?.length === 0 && <p>No endpoints yet. Add one above.</p>}
        {list.data && list.data.length > 0 && (
          <WebhookTable
            endpoints={list.data}
            selectedId={selectedId}
            busy={rowAction.busy}
            onDeliveries={showDeliveries}
            onTest={sendTest}
            onEnable={enable}
            onAction={open}
          />
        )}
        {!list.data && list.loading && <p aria-live="polite">Loading endpoints…</p>}
      </section>

      {selected && (
        <Deliveries
          key={selected.id}
          endpoint={selected}
          version={deliveriesVersion}
          headingRef={deliveriesHeading}
          onClose={() => setSelectedId(null)}
        />
      )}

      {action?.kind === 'rotate' && (
        <ConfirmDialog
          title={`Rotate the signing secret of ${action.endpoint.url}?`}
          confirmLabel="Rotate secret"
          onCancel={() => setAction(null)}
          onConfirm={async () => {
            const { secret } = await webhooksApi.rotateSecret(action.endpoint.id);
            await finish(`The signing secret of ${action.endpoint.url} was rotated.`);
            setRevealed({ endpoint: action.endpoint, secret: secret ?? '', rotated: true });
          }}
        >
          <p>
            A new secret is made and shown once. For 24 hours every delivery carries two signatures, one with the new
            secret and one with the current one, so your receiver can switch at its own pace.
          </p>
        </ConfirmDialog>
      )}
      {action?.kind === 'disable' && (
        <ConfirmDialog
          title={`Disable ${action.endpoint.url}?`}
          confirmLabel="Disable endpoint"
          danger
          onCancel={() => setAction(null)}
          onConfirm={async () => {
            await webhooksApi.update(action.endpoint.id, { enabled: false });
            await finish(`${action.endpoint.url} was disabled.`);
          }}
        >
          <p>No events are sent to it until it is enabled again. Deliveries still waiting for it fail.</p>
        </ConfirmDialog>
      )}
      {action?.kind === 'delete' && (
        <ConfirmDialog
          title={`Delete ${action.endpoint.url}?`}
          confirmLabel="Delete endpoint"
          danger
          onCancel={() => setAction(null)}
          onConfirm={async () => {
            await webhooksApi.remove(action.endpoint.id);
            if (selectedId === action.endpoint.id) setSelectedId(null);
            await finish(`${action.endpoint.url} was deleted.`);
          }}
        >
          <p>Events are no longer sent there, and its deliveries are deleted with it. This cannot be undone.</p>
        </ConfirmDialog>
      )}

      {revealed && (
        <OneTimeSecretDialog
          title={revealed.rotated ? `New signing secret for ${revealed.endpoint.url}` : 'Webhook endpoint created'}
          inputId="webhook-secret"
          label="Signing secret"
          noun="secret"
          value={revealed.secret}
          warning={
            <>
              <strong>Copy this secret now: it is shown only once.</strong> Your receiver checks every delivery’s
              signature with it. The service cannot show it again; if you lose it, rotate the secret.
              {revealed.rotated ? ' The previous secret keeps signing alongside it for 24 hours.' : ''}
            </>
          }
          hint={
            <>
              Verify each delivery’s raw body with the <code>standardwebhooks</code> package:{' '}
              <code>new Webhook(secret).verify(body, headers)</code>.
            </>
          }
          closeLabel="I have stored the secret"
          onClose={() => setRevealed(null)}
        />
      )}
    </>
  );
}

function CreateWebhookForm({
  onStart,
  onCreated,
}: {
  onStart: () => void;
  onCreated: (endpoint: Webhook, secret: string) => void;
}) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>([]);
  const [description, setDescription] = useState('');
  const { busy, error, setError, run } = useAction();

  // A change to a field is a new attempt: the message about it goes.
  const edited = (field: string) => {
    if (error?.hasField(field)) setError(null);
  };
  const toggle = (type: WebhookEventType, checked: boolean) => {
    // Kept in the list's order, whatever order they were checked in.
    setEvents(EVENT_LIST.filter((item) => (item === type ? checked : events.includes(item))));
    edited('events');
  };

  async function submit(event: Event) {
    event.preventDefault();
    onStart();
    await run(async () => {
      const created = await webhooksApi.create(url.trim(), events, description.trim());
      setUrl('');
      setEvents([]);
      setDescription('');
      onCreated(created, created.secret ?? '');
    });
  }

  return (
    <section aria-labelledby="create-webhook-heading" class="card">
      <h2 id="create-webhook-heading">Add an endpoint</h2>
      <form onSubmit={submit} class="stack">
        <div class="field">
          <label for="webhook-url">Endpoint URL</label>
          <input
            id="webhook-url"
            type="url"
            required
            maxLength={2048}
            placeholder="https://example.com/hooks/kqs"
            value={url}
            onInput={(event) => {
              setUrl(event.currentTarget.value);
              edited('url');
            }}
            aria-invalid={error?.hasField('url') || undefined}
            aria-describedby={describedBy(error, 'url', 'webhook-url-error', 'webhook-url-hint')}
          />
          <p class="hint" id="webhook-url-hint">
            HTTPS, on a public address. Events are POSTed there as JSON.
          </p>
          <ErrorText error={error} field="url" id="webhook-url-error" />
        </div>
        <fieldset class="event-list" aria-describedby={error?.hasField('events') ? 'webhook-events-error' : undefined}>
          <legend>Events</legend>
          {EVENT_LIST.map((type) => (
            <label key={type} class="checkbox">
              <input
                type="checkbox"
                name="events"
                value={type}
                checked={events.includes(type)}
                onChange={(event) => toggle(type, event.currentTarget.checked)}
              />
              <span>
                <code>{type}</code> {EVENT_TYPES[type]}
              </span>
            </label>
          ))}
          <ErrorText error={error} field="events" id="webhook-events-error" />
        </fieldset>
        <div class="field">
          <label for="webhook-description">Description (optional)</label>
          <input
            id="webhook-description"
            maxLength={500}
            placeholder="e.g. production receiver"
            value={description}
            onInput={(event) => {
              setDescription(event.currentTarget.value);
              edited('description');
            }}
            aria-invalid={error?.hasField('description') || undefined}
            aria-describedby={describedBy(error, 'description', 'webhook-description-error')}
          />
          <ErrorText error={error} field="description" id="webhook-description-error" />
        </div>
        <ErrorText error={error} id="create-webhook-error" besideFields={CREATE_FIELDS} />
        <div>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Adding…' : 'Add endpoint'}
          </button>
        </div>
      </form>
    </section>
  );
}

function WebhookTable({
  endpoints,
  selectedId,
  busy,
  onDeliveries,
  onTest,
  onEnable,
  onAction,
}: {
  endpoints: Webhook[];
  selectedId: string | null;
  busy: boolean;
  onDeliveries: (endpoint: Webhook) => void;
  onTest: (endpoint: Webhook) => Promise<void>;
  onEnable: (endpoint: Webhook) => Promise<void>;
  onAction: (action: Action) => void;
}) {
  return (
    <table class="responsive-table webhooks-table">
      <caption class="visually-hidden">Your webhook endpoints, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Endpoint</th>
          <th scope="col">Events</th>
          <th scope="col">Status</th>
          <th scope="col">Created</th>
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {endpoints.map((endpoint) => (
          <tr
            key={endpoint.id}
            data-webhook-id={endpoint.id}
            data-status={endpoint.enabled ? 'enabled' : 'disabled'}
            class={endpoint.id === selectedId ? 'selected' : undefined}
          >
            <th scope="row" data-label="Endpoint" class="webhook-url">
              <code>{endpoint.url}</code>
              {endpoint.description && <span class="subtle webhook-description">{endpoint.description}</span>}
            </th>
            <td data-label="Events" data-field="events">
              <ul class="plain-list">
                {endpoint.events.map((type) => (
                  <li key={type}>
                    <code>{type}</code>
                  </li>
                ))}
              </ul>
            </td>
            <td data-label="Status" data-field="status">
              <span class={`badge ${endpoint.enabled ? 'badge-active' : 'badge-revoked'}`}>
                {endpoint.enabled ? 'Enabled' : 'Disabled'}
              </span>
              {!endpoint.enabled && endpoint.disabled_reason && (
                <span class="rotation webhook-disabled-reason"> {endpoint.disabled_reason}</span>
              )}
            </td>
            <td data-label="Created">
              <Time iso={endpoint.created_at} />
            </td>
            <td class="actions">
              <div class="button-row">
                <button type="button" onClick={() => onDeliveries(endpoint)} aria-pressed={endpoint.id === selectedId}>
                  Deliveries<span class="visually-hidden"> to {endpoint.url}</span>
                </button>
                <button type="button" onClick={() => onTest(endpoint)} disabled={busy || !endpoint.enabled}>
                  Send test<span class="visually-hidden"> to {endpoint.url}</span>
                </button>
                <button type="button" onClick={() => onAction({ kind: 'rotate', endpoint })}>
                  Rotate secret<span class="visually-hidden"> of {endpoint.url}</span>
                </button>
                {endpoint.enabled ? (
                  <button type="button" onClick={() => onAction({ kind: 'disable', endpoint })}>
                    Disable<span class="visually-hidden"> {endpoint.url}</span>
                  </button>
                ) : (
                  <button type="button" onClick={() => onEnable(endpoint)} disabled={busy}>
                    Enable<span class="visually-hidden"> {endpoint.url}</span>
                  </button>
                )}
                <button type="button" class="danger-outline" onClick={() => onAction({ kind: 'delete', endpoint })}>
                  Delete<span class="visually-hidden"> {endpoint.url}</span>
                </button>
              </div>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Whether the list should look again soon: a delivery is on its way or about to be. */
function settlingSoon(deliveries: WebhookDelivery[], now = Date.now()): boolean {
  return deliveries.some(
    (delivery) =>
      delivery.status === 'sending' ||
      (delivery.status === 'pending' &&
        (delivery.next_attempt_at === null || Date.parse(delivery.next_attempt_at) - now < SOON_MS)),
  );
}

function Deliveries({
  endpoint,
  version,
  headingRef,
  onClose,
}: {
  endpoint: Webhook;
  /** Bumped by the page to load the list again (after a test event). */
  version: number;
  headingRef: { current: HTMLHeadingElement | null };
  onClose: () => void;
}) {
  const [offset, setOffset] = useState(0);
  const list = useResource(
    () => webhooksApi.deliveries(endpoint.id, DELIVERY_PAGE_SIZE, offset),
    [endpoint.id, offset, version],
  );
  const retry = useAction();
  const [status, setStatus] = useState('');
  const page = list.data;

  // A delivery on its way is followed until it settles, so its answer appears without a click.
  useEffect(() => {
    if (!page || list.loading || !settlingSoon(page.results)) return;
    const timer = setTimeout(() => void list.reload(), POLL_MS);
    return () => clearTimeout(timer);
  }, [page, list.loading]);

  async function retryDelivery(delivery: WebhookDelivery) {
    setStatus('');
    const queued = await retry.run(() => webhooksApi.retry(endpoint.id, delivery.id));
    if (!queued) return;
    setStatus(`The ${delivery.type} delivery was queued to be sent again now.`);
    await list.reload();
  }

  return (
    <section aria-labelledby="deliveries-heading" class="deliveries">
      <div class="section-header">
        <h2 id="deliveries-heading" ref={headingRef} tabIndex={-1}>
          Deliveries to <code>{endpoint.url}</code>
          {page ? ` (${formatNumber(page.count)})` : ''}
        </h2>
        <div class="button-row">
          <button type="button" onClick={() => list.reload()} disabled={list.loading}>
            Refresh<span class="visually-hidden"> deliveries</span>
          </button>
          <button type="button" onClick={onClose}>
            Close<span class="visually-hidden"> deliveries</span>
          </button>
        </div>
      </div>
      <p class="hint">
        Every event sent to this endpoint, newest first: each is tried until it gets a 2xx answer within 10 seconds,
        after 5 seconds, 5 minutes, 30 minutes, 2, 5, 10 and 10 hours.
      </p>
      <p class="hint" role="status">
        {status}
      </p>
      <ErrorText error={list.error} />
      <ErrorText error={retry.error} id="delivery-retry-error" />
      {page?.results.length === 0 && <p>No deliveries yet. Send a test event to see one.</p>}
      {page && page.results.length > 0 && (
        <table class="responsive-table deliveries-table">
          <caption class="visually-hidden">Deliveries to {endpoint.url}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Next attempt</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {page.results.map((delivery) => {
              const shown = DELIVERY_STATUS[delivery.status];
              return (
                <tr key={delivery.id} data-delivery-id={delivery.id} data-status={delivery.status}>
                  <th scope="row" data-label="Event">
                    <code>{delivery.type}</code>
                  </th>
                  <td data-label="Status" data-field="status">
                    <span class={`badge ${shown.badge}`}>{shown.label}</span>
                  </td>
                  <td data-label="Attempts" data-field="attempts">
                    {formatNumber(delivery.attempts)}
                  </td>
                  <td data-label="Last answer" data-field="answer">
                    <Answer delivery={delivery} />
                  </td>
                  <td data-label="Next attempt" data-field="next-attempt">
                    {delivery.next_attempt_at ? <Time iso={delivery.next_attempt_at} /> : '—'}
                  </td>
                  <td data-label="Created">
                    <Time iso={delivery.created_at} />
                  </td>
                  <td class="actions">
                    {delivery.status !== 'sending' && (
                      <button type="button" onClick={() => retryDelivery(delivery)} disabled={retry.busy}>
                        {delivery.status === 'delivered' ? 'Send again' : 'Retry'}
                        <span class="visually-hidden"> the {delivery.type} delivery</span>
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <PageNav label="Delivery pages" offset={offset} pageSize={DELIVERY_PAGE_SIZE} page={page} onOffset={setOffset} />
    </section>
  );
}

/** The receiver's last answer: its HTTP status and the start of its body, or why there was none. */
function Answer({ delivery }: { delivery: WebhookDelivery }) {
  if (delivery.attempts === 0) return <span class="subtle">Not sent yet</span>;
  const body = delivery.response_body ?? '';
  return (
    <div class="answer">
      {delivery.response_status !== null && <span data-field="response-status">HTTP {delivery.response_status}</span>}
      {body && body.length <= SHORT_BODY && (
        <code class="response-body" data-field="response-body">
          {body}
        </code>
      )}
      {body.length > SHORT_BODY && (
        <details>
          <summary>
            <code class="response-body">{body.slice(0, SHORT_BODY)}…</code>
          </summary>
          <pre class="response-body" data-field="response-body" tabIndex={0}>
            {body}
          </pre>
        </details>
      )}
      {delivery.last_error && (
        <span class="webhook-error" data-field="last-error">
          {delivery.last_error}
        </span>
      )}
    </div>
  );
}
