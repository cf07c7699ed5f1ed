import type { ApiKey } from '../api/types';

export type KeyStatus = 'active' | 'expired' | 'revoked' | 'rotated';

/** Rotated when another key replaced it; else expired when its expiry has passed; else revoked when inactive. */
export function keyStatus(key: ApiKey, now = Date.now()): KeyStatus {
  if (key.replaced_by) return 'rotated';
  if (key.expires_at && Date.parse(key.expires_at) <= now) return 'expired';
  return key.is_active ? 'active' : 'revoked';
}

export const STATUS_LABEL: Record<KeyStatus, string> = {
  active: 'Active',
  expired: 'Expired',
  revoked: 'Revoked',
  rotated: 'Rotated',
};
