import type { ComponentChildren } from 'preact';
import { Dialog } from './Dialog';
import { ErrorText } from './ErrorText';
import { useAction } from '../lib/use-action';

interface ConfirmDialogProps {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<void>;
  onCancel: () => void;
}

/** "Are you sure?" with the action's error shown inside it. Focus starts on Cancel, the safe choice. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  danger = false,
  onConfirm,
  onCancel,
}: ConfirmDialogProps) {
  const { busy, error, run } = useAction();
  const confirm = () => run(onConfirm, { leaving: true });

  return (
    <Dialog title={title} onDismiss={onCancel} alert>
      <div class="dialog-body">{children}</div>
      <ErrorText error={error} />
      <div class="buttons">
        <button type="button" class={danger ? 'danger' : 'primary'} onClick={confirm} disabled={busy} aria-busy={busy}>
          {busy ? 'Working…' : confirmLabel}
        </button>
        <button type="button" onClick={onCancel} data-autofocus>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
