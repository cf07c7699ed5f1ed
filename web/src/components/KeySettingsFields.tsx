import type { ApiError } from '../api/http';
import type { KeyScope } from '../api/types';
import { describedBy, ErrorText } from './ErrorText';
import { type MetadataRow, SCOPES, type SettingsDraft } from '../lib/key-settings';
import { CollectionChecklist } from './CollectionChecklist';
import { useCollections } from '../lib/collections';

const RATE_LIMIT_MAX = 1_000_000;
const CREDIT_LIMIT_MAX = 2 ** 31 - 1;
const METADATA_ROWS_MAX = 16;
const NUMBER_PATTERN = String.raw`-?\d+(\.\d+)?([eE][+\-]?\d+)?`;

/** The API's names of the fields below: their errors are shown next to them. */
export const KEY_SETTINGS_FIELDS = [
  'scopes',
  'rate_limit_per_minute',
  'monthly_credit_limit',
  'metadata',
  'collection_ids',
];

/**
 * A key's scopes (checkboxes; none checked means every scope), its two limits (empty means the
 * default) and its metadata as key/value rows. Used by the create form and the settings dialog.
 */
export function KeySettingsFields({
  id,
  draft,
  onChange,
  error,
}: {
  /** Prefix of the controls' ids, unique on the page. */
  id: string;
  draft: SettingsDraft;
  onChange: (draft: SettingsDraft) => void;
  /** The last save's error: a message about one of these fields is shown under it. */
  error?: ApiError | null;
}) {
  const toggle = (scope: KeyScope, checked: boolean) =>
    onChange({
      ...draft,
      scopes: checked ? [...draft.scopes, scope] : draft.scopes.filter((item) => item !== scope),
    });
  const collections = useCollections();
  const all = collections.data ?? [];
  const setRow = (index: number, change: Partial<MetadataRow>) =>
    onChange({ ...draft, metadata: draft.metadata.map((row, i) => (i === index ? { ...row, ...change } : row)) });

  return (
    <div class="key-settings stack">
      <fieldset class="scope-list">
        <legend>Scopes</legend>
        <p class="hint" id={`${id}-scopes-hint`}>
          None checked: the key may do everything you can.
        </p>
        {SCOPES.map(({ scope, label }) => (
          <label key={scope} class="checkbox">
            <input
              type="checkbox"
              name="scopes"
              value={scope}
              checked={draft.scopes.includes(scope)}
              onChange={(event) => toggle(scope, event.currentTarget.checked)}
              aria-describedby={`${id}-scopes-hint`}
            />
            <span>
              <code>{scope}</code> {label}
            </span>
          </label>
        ))}
        <ErrorText error={error} field="scopes" id={`${id}-scopes-error`} />
      </fieldset>

      <fieldset class="scope-list key-collections">
        <legend>Collections</legend>
        <label class="checkbox">
          <input
            type="radio"
            name={`${id}-collection-reach`}
            checked={draft.collections === null}
            onChange={() => onChange({ ...draft, collections: null })}
          />
          <span>Every collection</span>
        </label>
        <label class="checkbox">
          <input
            type="radio"
            name={`${id}-collection-reach`}
            checked={draft.collections !== null}
            onChange={() => onChange({ ...draft, collections: draft.collections ?? [] })}
          />
          <span>Only the collections chosen below</span>
        </label>
        {draft.collections !== null && (
          <CollectionChecklist
            id={`${id}-key`}
            legend="Chosen collections"
            hint="1 to 20. The key finds, reads and writes nothing of any other collection; its uploads go into the first."
            all={all}
            chosen={draft.collections}
            onChange={(chosen) => onChange({ ...draft, collections: chosen })}
          />
        )}
        <ErrorText error={collections.error} />
        <ErrorText error={error} field="collection_ids" id={`${id}-collections-error`} />
      </fieldset>

      <div class="field-row">
        <div class="field">
          <label for={`${id}-rate-limit`}>Requests per minute</label>
          <input
            id={`${id}-rate-limit`}
            type="number"
            inputMode="numeric"
            min={1}
            max={RATE_LIMIT_MAX}
            step={1}
            placeholder="Service default"
            value={draft.rateLimit}
            onInput={(event) => onChange({ ...draft, rateLimit: event.currentTarget.value })}
            aria-invalid={error?.hasField('rate_limit_per_minute') || undefined}
            aria-describedby={describedBy(
              error,
              'rate_limit_per_minute',
              `${id}-rate-limit-error`,
              `${id}-rate-limit-hint`,
            )}
          />
          <p class="hint" id={`${id}-rate-limit-hint`}>
            1 to 1,000,000; empty: the service's default.
          </p>
          <ErrorText error={error} field="rate_limit_per_minute" id={`${id}-rate-limit-error`} />
        </div>
        <div class="field">
          <label for={`${id}-credit-limit`}>Monthly credit limit</label>
          <input
            id={`${id}-credit-limit`}
            type="number"
            inputMode="numeric"
            min={0}
            max={CREDIT_LIMIT_MAX}
            step={1}
            placeholder="No limit"
            value={draft.creditLimit}
            onInput={(event) => onChange({ ...draft, creditLimit: event.currentTarget.value })}
            aria-invalid={error?.hasField('monthly_credit_limit') || undefined}
            aria-describedby={describedBy(
              error,
              'monthly_credit_limit',
              `${id}-credit-limit-error`,
              `${id}-credit-limit-hint`,
            )}
          />
          <p class="hint" id={`${id}-credit-limit-hint`}>
            Within the organization's quota; empty: no limit of its own.
          </p>
          <ErrorText error={error} field="monthly_credit_limit" id={`${id}-credit-limit-error`} />
        </div>
      </div>

      <fieldset class="metadata-rows">
        <legend>Metadata</legend>
        <p class="hint">Your own labels, e.g. the customer or environment the key is for.</p>
        {draft.metadata.map((row, index) => (
          <div class="metadata-row" key={index} data-testid="metadata-row">
            <div class="field">
              <label for={`${id}-meta-key-${index}`}>Key {index + 1}</label>
              <input
                id={`${id}-meta-key-${index}`}
                maxLength={40}
                value={row.key}
                required={row.value !== ''}
                onInput={(event) => setRow(index, { key: event.currentTarget.value })}
              />
            </div>
            <div class="field">
              <label for={`${id}-meta-value-${index}`}>Value {index + 1}</label>
              <input
                id={`${id}-meta-value-${index}`}
                value={row.value}
                // A number row must hold a JSON number; the browser refuses the form otherwise.
                inputMode={row.type === 'number' ? 'decimal' : 'text'}
                // Never left out: Preact clears a removed pattern to "", which only an empty value matches.
                pattern={row.type === 'number' ? NUMBER_PATTERN : '.*'}
                title={row.type === 'number' ? 'A number, e.g. 2 or 0.5' : undefined}
                required={row.type === 'number'}
                onInput={(event) => setRow(index, { value: event.currentTarget.value })}
              />
            </div>
            <div class="field">
              <label for={`${id}-meta-type-${index}`}>Type {index + 1}</label>
              <select
                id={`${id}-meta-type-${index}`}
                value={row.type}
                onChange={(event) => setRow(index, { type: event.currentTarget.value as MetadataRow['type'] })}
              >
                <option value="text">Text</option>
                <option value="number">Number</option>
              </select>
            </div>
            <button
              type="button"
              class="danger-outline"
              onClick={() => onChange({ ...draft, metadata: draft.metadata.filter((_, i) => i !== index) })}
            >
              Remove<span class="visually-hidden"> metadata row {index + 1}</span>
            </button>
          </div>
        ))}
        <button
          type="button"
          disabled={draft.metadata.length >= METADATA_ROWS_MAX}
          onClick={() => onChange({ ...draft, metadata: [...draft.metadata, { key: '', value: '', type: 'text' }] })}
        >
          Add metadata
        </button>
        <ErrorText error={error} field="metadata" id={`${id}-metadata-error`} />
      </fieldset>
    </div>
  );
}
