import { useEffect, useState } from 'preact/hooks';
import { domains as domainsApi, organizations } from '../api/endpoints';
import { session } from '../api/session';
import { type ApiError } from '../api/http';
import type { Domain, Organization } from '../api/types';
import { ErrorText } from '../components/ErrorText';
import { PageHeading } from '../components/PageHeading';
import { Time } from '../components/Time';
import { useRoleAtLeast } from '../state';
import { useResource } from '../lib/use-resource';
import { useAction } from '../lib/use-action';

export function OrganizationPage() {
  const current = useResource(() => organizations.current(), []);
  const domains = useResource(() => domainsApi.list(), []);
  const [organization, setOrganization] = useState<Organization | null>(null);
  const admin = useRoleAtLeast('admin');
  useEffect(() => {
    if (current.data) setOrganization(current.data);
  }, [current.data]);

  return (
    <>
      <PageHeading title="Organization" />
      <ErrorText error={current.error} />
      {!organization && !current.error && <p>Loading…</p>}
      {organization && (
        <>
          <p class="lede">
            <strong>{organization.name}</strong>, created <Time iso={organization.created_at} dateOnly />. Only its
            admins and owner can change these settings.
          </p>
          {admin ? (
            <>
              <RenameForm organization={organization} onSaved={setOrganization} />
              <AllowedDomainsForm
                organization={organization}
                domains={domains.data ?? []}
                domainsError={domains.error}
                onSaved={setOrganization}
              />
            </>
          ) : (
            <section aria-labelledby="domains-heading" class="card">
              <h2 id="domains-heading">Allowed domains</h2>
              <p data-testid="allowed-domains">
                {organization.allowed_domains === null
                  ? 'Every public domain may be queried.'
                  : organization.allowed_domains.length === 0
                    ? 'Only the private knowledge base may be queried.'
                    : `Only these public domains may be queried: ${organization.allowed_domains.join(', ')}.`}
              </p>
            </section>
          )}
        </>
      )}
      <SessionsCard />
    </>
  );
}

/** Your own sign-ins rather than the organization's, but this is the settings page. */
function SessionsCard() {
  const { busy, error, run } = useAction();
  return (
    <section aria-labelledby="sessions-heading" class="card">
      <h2 id="sessions-heading">Your sessions</h2>
      <p class="hint" id="sessions-hint">
        Signed in somewhere you no longer use, or lost a device? This ends every session of your account, this one
        included. API keys keep working.
      </p>
      <button
        type="button"
        disabled={busy}
        aria-describedby="sessions-hint"
        onClick={() => void run(() => session.signOutEverywhere(), { leaving: true })}
      >
        Sign out everywhere
      </button>
      <ErrorText error={error} id="sessions-error" />
    </section>
  );
}

function useSave(onSaved: (organization: Organization) => void) {
  const { busy, error, run } = useAction();
  const [status, setStatus] = useState('');
  async function save(change: Parameters<typeof organizations.update>[0], message: string) {
    setStatus('');
    if (await run(async () => onSaved(await organizations.update(change)))) setStatus(message);
  }
  return { busy, error, status, save };
}

function RenameForm({
  organization,
  onSaved,
}: {
  organization: Organization;
  onSaved: (organization: Organization) => void;
}) {
  const [name, setName] = useState(organization.name);
  const { busy, error, status, save } = useSave(onSaved);
  return (
    <section aria-labelledby="name-heading" class="card">
      <h2 id="name-heading">Name</h2>
      <form
        class="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void save({ name: name.trim() }, 'The name was saved.');
        }}
      >
        <div class="field grow">
          <label for="organization-name">Organization name</label>
          <input
            id="organization-name"
            required
            maxLength={200}
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? 'name-error' : undefined}
          />
        </div>
        <button type="submit" class="primary" disabled={busy}>
          Rename
        </button>
      </form>
      <ErrorText error={error} id="name-error" />
      <p class="hint" role="status">
        {status}
      </p>
    </section>
  );
}

interface AllowedDomainsFormProps {
  organization: Organization;
  domains: Domain[];
  domainsError: ApiError | null;
  onSaved: (organization: Organization) => void;
}

function AllowedDomainsForm({ organization, domains, domainsError, onSaved }: AllowedDomainsFormProps) {
  const [restricted, setRestricted] = useState(organization.allowed_domains !== null);
  const [selected, setSelected] = useState(new Set(organization.allowed_domains ?? []));
  const { busy, error, status, save } = useSave(onSaved);
  // Slugs still listed but no longer among the active domains stay visible, so they can be removed.
  const unknown = [...selected].filter((slug) => !domains.some((domain) => domain.slug === slug));

  function toggle(slug: string, on: boolean) {
    const next = new Set(selected);
    if (on) next.add(slug);
    else next.delete(slug);
    setSelected(next);
  }

  return (
    <section aria-labelledby="domains-heading" class="card">
      <h2 id="domains-heading">Allowed domains</h2>
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          void save({ allowed_domains: restricted ? [...selected] : null }, 'Allowed domains were saved.');
        }}
      >
        <fieldset>
          <legend>Which public domains may your organization query?</legend>
          <label class="checkbox">
            <input type="radio" name="domain-scope" checked={!restricted} onChange={() => setRestricted(false)} /> All
            public domains (no restriction)
          </label>
          <label class="checkbox">
            <input type="radio" name="domain-scope" checked={restricted} onChange={() => setRestricted(true)} /> Only
            the domains selected below
          </label>
        </fieldset>
        <fieldset disabled={!restricted} aria-describedby="domains-hint">
          <legend>Domains</legend>
          <ErrorText error={domainsError} />
          {domains.length === 0 && unknown.length === 0 && <p class="hint">There are no public domains yet.</p>}
          {domains.map((domain) => (
            <label class="checkbox" key={domain.slug}>
              <input
                type="checkbox"
                checked={selected.has(domain.slug)}
                onChange={(event) => toggle(domain.slug, event.currentTarget.checked)}
              />{' '}
              {domain.name} <code>{domain.slug}</code>
              {domain.region && <span class="subtle"> · {domain.region}</span>}
            </label>
          ))}
          {unknown.map((slug) => (
            <label class="checkbox" key={slug}>
              <input type="checkbox" checked onChange={(event) => toggle(slug, event.currentTarget.checked)} />{' '}
              <code>{slug}</code> <span class="subtle">(not an active domain)</span>
            </label>
          ))}
          <p class="hint" id="domains-hint">
            With none selected, only the private knowledge base can be queried.
          </p>
        </fieldset>
        <ErrorText error={error} id="domains-error" />
        <div>
          <button type="submit" class="primary" disabled={busy}>
            Save allowed domains
          </button>
        </div>
        <p class="hint" role="status">
          {status}
        </p>
      </form>
    </section>
  );
}
