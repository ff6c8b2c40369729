/** A confirmation in a modal <dialog>: showModal traps focus and makes the page inert, Escape closes it. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorAlert } from './status.tsx';

/** Asks before `onConfirm` runs; stays open showing the error when it fails, closes when it succeeds. */
export function ConfirmDialog(props: { title: string; confirmLabel: string; children: ComponentChildren; onConfirm(): Promise<void>; onClose(): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.onConfirm();
      ref.current?.close();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  // Escape, Cancel and a successful confirm all end in the dialog's close event.
  return (
    <dialog ref={ref} onClose={props.onClose} aria-labelledby="dialog-title">
      <h2 id="dialog-title">{props.title}</h2>
      {props.children}
      <ErrorAlert error={error} />
      <div class="actions">
        <button type="button" onClick={() => ref.current?.close()}>
          Cancel
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => void confirm()}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
