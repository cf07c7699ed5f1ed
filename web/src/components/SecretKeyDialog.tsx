import { useRef, useState } from 'preact/hooks';
import type { ApiKey } from '../api/types';
import { Dialog } from './Dialog';

async function copyText(text: string, fallbackInput: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No Clipboard API outside secure contexts (plain http on a LAN address): the old way.
    fallbackInput?.select();
    return document.execCommand('copy');
  }
}

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
  const input = useRef<HTMLInputElement>(null);
  const [copyStatus, setCopyStatus] = useState('');
  // Escape does not close it: the key would be gone for good. It says so instead.
  const [escaped, setEscaped] = useState(false);
  const value = apiKey.key ?? '';

  return (
    <Dialog
      title={rotated ? `New key for “${apiKey.name}”` : `Key “${apiKey.name}” created`}
      onDismiss={onClose}
      onEscape={() => setEscaped(true)}
    >
      <p class="warning">
        <strong>Copy this key now: it is shown only once.</strong> The service keeps only a hash of it and cannot show
        it again. If you lose it, rotate the key to get a new one.
        {rotated ? ` ${previousKeyNote(graceUntil)}` : ''}
      </p>
      <label for="secret-key">API key</label>
      <div class="copy-row">
        <input
          ref={input}
          id="secret-key"
          class="mono"
          type="text"
          readOnly
          value={value}
          spellcheck={false}
          autoComplete="off"
          onFocus={(event) => event.currentTarget.select()}
          data-autofocus
        />
        <button
          type="button"
          onClick={async () =>
            setCopyStatus(
              (await copyText(value, input.current))
                ? 'Copied to the clipboard.'
                : 'Copying failed: select the key and copy it yourself.',
            )
          }
        >
          Copy
        </button>
      </div>
      <p class="hint" role="status">
        {copyStatus}
      </p>
      <p class="hint">
        Send it as the <code>X-API-Key</code> header, or as <code>Authorization: Bearer …</code>.
      </p>
      {escaped && (
        <p class="error" role="alert">
          This key will not be shown again. Copy it first, then choose “I have stored the key” to close.
        </p>
      )}
      <div class="buttons">
        <button type="button" class="primary" onClick={onClose}>
          I have stored the key
        </button>
      </div>
    </Dialog>
  );
}
