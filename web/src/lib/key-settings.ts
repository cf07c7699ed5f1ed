import type { ApiKey, KeyScope, KeySettings } from '../api/types';
import { formatNumber } from './format';

/** The six scopes, in the contract's order, with what each allows. */
export const SCOPES: { scope: KeyScope; label: string }[] = [
  { scope: 'query', label: 'Queries and chat messages' },
  { scope: 'documents:read', label: 'Read documents' },
  { scope: 'documents:write', label: 'Upload and delete documents' },
  { scope: 'chat', label: 'Chat sessions' },
  { scope: 'usage:read', label: 'Subscription and usage' },
  { scope: 'organization:write', label: 'Change the organization' },
];

export interface MetadataRow {
  key: string;
  value: string;
  type: 'text' | 'number';
}

/** The form's state: text as typed; an empty limit means the default, no scope checked means every scope. */
export interface SettingsDraft {
  scopes: KeyScope[];
  rateLimit: string;
  creditLimit: string;
  metadata: MetadataRow[];
  /** null: every collection; else the chosen collections' ids, in order. */
  collections: string[] | null;
}

export function draftOf(key?: ApiKey): SettingsDraft {
  return {
    scopes: key?.scopes ?? [],
    rateLimit: key?.rate_limit_per_minute?.toString() ?? '',
    creditLimit: key?.monthly_credit_limit?.toString() ?? '',
    metadata: Object.entries(key?.metadata ?? {}).map(([name, value]) => ({
      key: name,
      value: String(value),
      type: typeof value === 'number' ? 'number' : 'text',
    })),
    collections: key?.collection_ids ?? null,
  };
}

/** What the API gets; the browser has already checked the number inputs. Rows without a key are left out. */
export function settingsOf(draft: SettingsDraft): Required<KeySettings> {
  const limit = (text: string) => (text.trim() === '' ? null : Number(text));
  return {
    scopes: draft.scopes.length === 0 ? null : SCOPES.map((s) => s.scope).filter((s) => draft.scopes.includes(s)),
    rate_limit_per_minute: limit(draft.rateLimit),
    monthly_credit_limit: limit(draft.creditLimit),
    metadata: Object.fromEntries(
      draft.metadata
        .filter((row) => row.key.trim() !== '')
        .map((row) => [row.key.trim(), row.type === 'number' ? Number(row.value) : row.value]),
    ),
    collection_ids: draft.collections,
  };
}

/** One line for the keys table: scopes, the collections when limited, then the limits that are set. */
export function accessSummary(key: ApiKey, collectionNames: (ids: string[]) => string[] = (ids) => ids): string {
  const parts = [key.scopes === null ? 'All scopes' : key.scopes.length === 0 ? 'No scope' : key.scopes.join(', ')];
  if (key.collection_ids !== null) parts.push(`Collections: ${collectionNames(key.collection_ids).join(', ')}`);
  if (key.rate_limit_per_minute !== null) parts.push(`${formatNumber(key.rate_limit_per_minute)}/min`);
  if (key.monthly_credit_limit !== null)
    parts.push(
      `${formatNumber(key.credits_used_this_period)} of ${formatNumber(key.monthly_credit_limit)} credits this month`,
    );
  return parts.join(' · ');
}
