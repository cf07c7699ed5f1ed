import type { ApiKey } from '../api/types';
import { OneTimeSecretDialog } from './OneTimeSecretDialog';

/** What happens to the key a rotation replaced: it stops now, or at the end of its grace period. */
function previousKeyNote(graceUntil: string | null | undefined): string {
  return graceUntil
    ? `The previous key keeps working until ${new Date(graceUntil).toLocaleString()}.`
    : 'The previous key no longer works.';
}

/** The full key, shown once after creation or rotation, with a copy button and the warning. */
export function SecretKeyDialog({
  apiKey,
  rotated,
  graceUntil,
  onClose,
}: {
  apiKey: ApiKey;
  rotated: boolean;
  /** After a rotation with a grace period: when the previous key stops. */
  graceUntil?: string | null;
  onClose: () => void;
}) {
  return (
    <OneTimeSecretDialog
      title={rotated ? `New key for “${apiKey.name}”` : `Key “${apiKey.name}” created`}
      inputId="secret-key"
      label="API key"
      noun="key"
      value={apiKey.key ?? ''}
      warning={
        <>
          <strong>Copy this key now: it is shown only once.</strong> The service keeps only a hash of it and cannot show
          it again. If you lose it, rotate the key to get a new one.
          {rotated ? ` ${previousKeyNote(graceUntil)}` : ''}
        </>
      }
      hint={
        <>
          Send it as the <code>X-API-Key</code> header, or as <code>Authorization: Bearer …</code>.
        </>
      }
      closeLabel="I have stored the key"
      onClose={onClose}
    />
  );
}
