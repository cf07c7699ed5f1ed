import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
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

/**
 * A secret shown once (a new API key, a webhook's signing secret), with a copy button and the warning.
 * Escape does not close it: the secret would be gone for good. It says so instead.
 */
export function OneTimeSecretDialog({
  title,
  inputId,
  label,
  noun,
  value,
  warning,
  hint,
  closeLabel,
  onClose,
}: {
  title: string;
  inputId: string;
  /** The input's label, which names the secret ("API key", "Signing secret"). */
  label: string;
  /** What the messages call it: "key", "secret". */
  noun: string;
  value: string;
  warning: ComponentChildren;
  hint: ComponentChildren;
  /** The one way out, e.g. "I have stored the key"; the warning after Escape quotes it. */
  closeLabel: string;
  onClose: () => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [copyStatus, setCopyStatus] = useState('');
  const [escaped, setEscaped] = useState(false);

  return (
    <Dialog title={title} onDismiss={onClose} onEscape={() => setEscaped(true)}>
      <p class="warning">{warning}</p>
      <label for={inputId}>{label}</label>
      <div class="copy-row">
        <input
          ref={input}
          id={inputId}
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
                : `Copying failed: select the ${noun} and copy it yourself.`,
            )
          }
        >
          Copy
        </button>
      </div>
      <p class="hint" role="status">
        {copyStatus}
      </p>
      <p class="hint">{hint}</p>
      {escaped && (
        <p class="error" role="alert">
          This {noun} will not be shown again. Copy it first, then choose “{closeLabel}” to close.
        </p>
      )}
      <div class="buttons">
        <button type="button" class="primary" onClick={onClose}>
          {closeLabel}
        </button>
      </div>
    </Dialog>
  );
}
