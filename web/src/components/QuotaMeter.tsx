import { useId } from 'preact/hooks';
import type { Subscription } from '../api/types';
import { formatDateTime, formatNumber } from '../lib/format';

/** Credits used out of the period's total, as an ARIA meter with the numbers also in text. */
export function QuotaMeter({ subscription, compact = false }: { subscription: Subscription; compact?: boolean }) {
  const labelId = useId();
  const {
    credits_total: total,
    credits_used: used,
    credits_remaining: remaining,
    period_end: periodEnd,
  } = subscription.current_quota;
  const percent = total > 0 ? Math.min(100, (used / total) * 100) : 100;
  const level = remaining <= 0 ? 'empty' : percent >= 80 ? 'low' : 'ok';
  const text = `${formatNumber(used)} of ${formatNumber(total)} credits used, ${formatNumber(remaining)} left`;

  return (
    <div class={compact ? 'quota quota-compact' : 'quota'} data-testid={compact ? 'quota-compact' : 'quota'}>
      <div class="quota-label" id={labelId}>
        {compact ? 'Credits' : `Credits this period · ${subscription.plan} plan`}
      </div>
      <div
        class="meter"
        role="meter"
        aria-labelledby={labelId}
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={used}
        aria-valuetext={text}
        data-level={level}
      >
        <div class="meter-fill" style={{ width: `${percent}%` }} />
      </div>
      {compact ? (
        <div class="quota-numbers">
          {formatNumber(used)} / {formatNumber(total)}
        </div>
      ) : (
        <p class="quota-numbers">
          <strong>{formatNumber(used)}</strong> of {formatNumber(total)} credits used ·{' '}
          <strong>{formatNumber(remaining)}</strong> left · resets{' '}
          <time dateTime={periodEnd}>{formatDateTime(periodEnd)}</time>
        </p>
      )}
    </div>
  );
}
