/** Look up a stored (or background) response by its id: its status, and its text once it has some. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { formatTime } from '../format.ts';

interface ResponseObject {
  id: string;
  status: string;
  model: string;
  created_at: number;
  output?: Array<{ type: string; content?: Array<{ type: string; text?: string }> }>;
  error?: { message?: string } | null;
  usage?: { input_tokens?: number; output_tokens?: number; total_tokens?: number } | null;
}

/** The text of the response's output messages, as the SDKs' `output_text` joins it. */
function outputText(response: ResponseObject): string {
  return (response.output ?? [])
    .filter((item) => item.type === 'message')
    .flatMap((item) => item.content ?? [])
    .filter((part) => part.type === 'output_text')
    .map((part) => part.text ?? '')
    .join('');
}

/** The "Look up a response" form and what it found. */
export function ResponseLookup() {
  const [id, setId] = useState('');
  const [state, setState] = useState<{ loading: boolean; response: ResponseObject | null; error: unknown }>({ loading: false, response: null, error: null });
  const submit = async (event: Event) => {
    event.preventDefault();
    setState({ loading: true, response: null, error: null });
    try {
      setState({ loading: false, response: await api<ResponseObject>(`/v1/responses/${encodeURIComponent(id.trim())}`), error: null });
    } catch (error) {
      setState({ loading: false, response: null, error });
    }
  };
  const response = state.response;
  return (
    <section aria-labelledby="lookup-title">
      <h2 id="lookup-title">Look up a response</h2>
      <form class="filters" aria-labelledby="lookup-title" onSubmit={(e) => void submit(e)}>
        <div>
          <label for="response-id">Response ID</label>
          <input id="response-id" required placeholder="resp_…" value={id} onInput={(e) => setId(e.currentTarget.value)} />
        </div>
        <button type="submit">Look up</button>
      </form>
      {state.loading && <Loading />}
      <ErrorAlert error={state.error} />
      {response && (
        <dl class="facts">
          <dt>ID</dt>
          <dd>
            <code>{response.id}</code>
          </dd>
          <dt>Status</dt>
          <dd>{response.status}</dd>
          <dt>Model</dt>
          <dd>{response.model}</dd>
          <dt>Created</dt>
          <dd>{formatTime(new Date(response.created_at * 1000).toISOString())}</dd>
          {response.usage && (
            <>
              <dt>Tokens</dt>
              <dd>{`${response.usage.input_tokens ?? 0} in, ${response.usage.output_tokens ?? 0} out`}</dd>
            </>
          )}
          {response.error?.message && (
            <>
              <dt>Error</dt>
              <dd>{response.error.message}</dd>
            </>
          )}
          <dt>Output</dt>
          <dd class="prewrap">{outputText(response) || '—'}</dd>
        </dl>
      )}
    </section>
  );
}
