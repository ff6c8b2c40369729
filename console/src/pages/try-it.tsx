/** Try it: run the active version of a prompt with its variables filled in, the answer streaming in as it is written. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { streamChat } from '../api.ts';
import { ErrorAlert } from '../components/status.tsx';

/** The "Try it" form of a prompt: one field per variable, and the streamed answer. */
export function TryIt(props: { name: string; variables: string[] }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [answer, setAnswer] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [running, setRunning] = useState(false);
  const controller = useRef<AbortController | null>(null);
  // Leaving the page or choosing another prompt stops the stream (the gateway then cancels the request).
  useEffect(() => () => controller.current?.abort(), [props.name]);

  const send = async (event: Event) => {
    event.preventDefault();
    controller.current?.abort();
    const current = new AbortController();
    controller.current = current;
    setAnswer('');
    setError(null);
    setRunning(true);
    try {
      const variables = Object.fromEntries(props.variables.map((name) => [name, values[name] ?? '']));
      await streamChat({ prompt: props.name, variables, stream: true }, (delta) => setAnswer((text) => text + delta), current.signal);
    } catch (failure) {
      if (!current.signal.aborted) setError(failure);
    } finally {
      if (controller.current === current) setRunning(false);
    }
  };
  return (
    <section aria-labelledby="try-it-title">
      <h3 id="try-it-title">Try it</h3>
      <form class="stack" onSubmit={(e) => void send(e)}>
        {props.variables.length === 0 && <p class="small muted">No variables: this prompt runs as it is.</p>}
        {props.variables.map((name) => (
          <div key={name} class="stack">
            <label for={`var-${name}`}>{name}</label>
            <textarea id={`var-${name}`} rows={2} value={values[name] ?? ''} onInput={(e) => setValues({ ...values, [name]: e.currentTarget.value })} />
          </div>
        ))}
        <div class="actions">
          <button type="submit" disabled={running}>
            Send
          </button>
          {running && (
            <button type="button" onClick={() => controller.current?.abort()}>
              Stop
            </button>
          )}
        </div>
      </form>
      <ErrorAlert error={error} />
      <section class="answer" aria-label="Answer" aria-live="polite" aria-busy={running}>
        {answer}
      </section>
    </section>
  );
}
