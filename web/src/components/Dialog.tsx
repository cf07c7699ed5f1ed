import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

interface DialogProps {
  title: string;
  onDismiss: () => void;
  children: ComponentChildren;
  alert?: boolean;
  /**
   * Called instead of `onDismiss` when Escape (or the browser's other close requests) would close the
   * dialog: it stays open. Chromium closes a dialog on a second Escape without a click in between
   * whatever the page does, so then it is opened again.
   */
  onEscape?: () => void;
}

/**
 * A modal on the native <dialog>: the browser traps focus and closes it with Escape. It focuses the
 * element marked `data-autofocus`, and gives focus back to what opened it (or to the page heading
 * when that is gone).
 */
export function Dialog({ title, onDismiss, children, alert = false, onEscape }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const dismissed = useRef(false);
  const dismiss = useRef(onDismiss);
  dismiss.current = onDismiss;
  const escape = useRef(onEscape);
  escape.current = onEscape;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    dialog.showModal();
    dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    return () => {
      dismissed.current = true;
      if (dialog.open) dialog.close();
      const target = opener?.isConnected ? opener : document.querySelector<HTMLElement>('main h1');
      target?.focus();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      class="dialog"
      role={alert ? 'alertdialog' : undefined}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (dismissed.current) return;
        if (escape.current) escape.current();
        else dismiss.current();
      }}
      onClose={(event) => {
        if (dismissed.current) return;
        if (escape.current) {
          event.currentTarget.showModal();
          escape.current();
        } else dismiss.current();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}
