import { useEffect } from 'preact/hooks';
import { billing } from '../api/endpoints';
import { ErrorText } from '../components/ErrorText';
import { KeyUsageChart } from '../components/KeyUsageChart';
import { PageHeading } from '../components/PageHeading';
import { QuotaMeter } from '../components/QuotaMeter';
import { UsageChart } from '../components/UsageChart';
import { formatDate, formatNumber } from '../lib/format';
import { useStore } from '../lib/store';
import { useResource } from '../lib/use-resource';
import { quota, reloadQuota } from '../state';

export function UsagePage() {
  const { subscription, error } = useStore(quota);
  const daily = useResource(() => billing.daily(), []);
  const byKey = useResource(() => billing.byKey(), []);
  const byMember = useResource(() => billing.byMember(), []);
  useEffect(() => {
    void reloadQuota();
  }, []);

  return (
    <>
      <PageHeading title="Usage" />
      <p class="lede">
        Every query and chat message costs credits. The quota is monthly (UTC) and refills when the period ends.
      </p>
      <section aria-labelledby="quota-heading" class="card">
        <h2 id="quota-heading">Quota</h2>
        <ErrorText error={error} />
        {subscription ? <QuotaMeter subscription={subscription} /> : !error && <p>Loading the quota…</p>}
      </section>
      <section aria-labelledby="daily-heading" class="card">
        <h2 id="daily-heading">
          Credits per day
          {subscription && (
            <span class="subtle">
              {' '}
              · {formatDate(subscription.current_quota.period_start)} to{' '}
              {formatDate(subscription.current_quota.period_end)}
            </span>
          )}
        </h2>
        <ErrorText error={daily.error} />
        {subscription && daily.data ? (
          <UsageChart
            usage={daily.data}
            periodStart={subscription.current_quota.period_start}
            periodEnd={subscription.current_quota.period_end}
          />
        ) : (
          !daily.error && <p>Loading usage…</p>
        )}
      </section>
      <section aria-labelledby="by-key-heading" class="card">
        <h2 id="by-key-heading">Usage by key</h2>
        <p class="hint">
          This period. Keys that still work are listed even when unused; revoked and expired keys only when they spent.
        </p>
        <ErrorText error={byKey.error} />
        {byKey.data ? <KeyUsageChart rows={byKey.data} /> : !byKey.error && <p>Loading usage by key…</p>}
      </section>
      {/* An organization of one has nothing to split. */}
      {((byMember.data && byMember.data.length > 1) || byMember.error) && (
        <section aria-labelledby="by-member-heading" class="card">
          <h2 id="by-member-heading">Usage by member</h2>
          <p class="hint">This period: each member's requests and credits, with those of the keys they made.</p>
          <ErrorText error={byMember.error} />
          {byMember.data && (
            <table class="responsive-table member-usage-table">
              <caption class="visually-hidden">Requests and credits per member this period</caption>
              <thead>
                <tr>
                  <th scope="col">Member</th>
                  <th scope="col" class="numeric">
                    Requests
                  </th>
                  <th scope="col" class="numeric">
                    Credits
                  </th>
                </tr>
              </thead>
              <tbody>
                {byMember.data.map((row) => (
                  <tr key={row.user_id}>
                    <th scope="row" data-label="Member">
                      {row.email}
                    </th>
                    <td data-label="Requests" class="numeric">
                      {formatNumber(row.requests)}
                    </td>
                    <td data-label="Credits" class="numeric" data-field="credits">
                      {formatNumber(row.credits)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
    </>
  );
}
