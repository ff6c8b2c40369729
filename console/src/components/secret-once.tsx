/** A secret the API shows in one answer only: read-only, with a Copy button, and a note that says so. */
import { useRef, useState } from 'preact/hooks';

/** The secret under its label; `id` names the field (unique on the page). */
export function SecretOnce(props: { id: string; label: string; secret: string; note?: string }) {
  const [copied, setCopied] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('Copied.');
    } catch {
      // Without clipboard permission, select it so that the reader's own copy works.
      input.current?.select();
      setCopied('Could not copy: the secret is selected, copy it with your keyboard.');
    }
  };
  return (
    <div class="secret">
      <label for={props.id}>{props.label}</label>
      <div class="row">
        <input id={props.id} ref={input} readOnly value={props.secret} aria-describedby={`${props.id}-note`} />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p id={`${props.id}-note`} class="small">
        This secret is shown once: copy it now, it cannot be read again. {props.note} <span aria-live="polite">{copied}</span>
      </p>
    </div>
  );
}
