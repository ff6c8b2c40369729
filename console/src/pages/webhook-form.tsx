/** The forms of a webhook endpoint: register one (its secret shown once), and change one's URL, events or whether it is enabled. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { SecretOnce } from '../components/secret-once.tsx';
import { ErrorAlert } from '../components/status.tsx';
import { WEBHOOK_EVENT_TYPES, webhookPath, type Webhook, type WebhookWithSecret } from './webhook-types.ts';

/** The event types as checkboxes; `chosen` is kept in the list's order. */
function EventChoices(props: { chosen: string[]; onChange(chosen: string[]): void }) {
  const toggle = (type: string, on: boolean) => props.onChange(WEBHOOK_EVENT_TYPES.filter((t) => (t === type ? on : props.chosen.includes(t))));
  return (
    <fieldset class="choices">
      <legend>Events</legend>
      {WEBHOOK_EVENT_TYPES.map((type) => (
        <label key={type} class="check">
          <input type="checkbox" checked={props.chosen.includes(type)} onChange={(e) => toggle(type, e.currentTarget.checked)} />
          {type}
        </label>
      ))}
    </fieldset>
  );
}

/** Runs a form's call: busy while it runs, its failure kept for ErrorAlert. */
function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (event: Event, action: () => Promise<void>) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/** Registers an endpoint (enabled), then shows its signing secret, which no later answer carries. */
export function CreateWebhook(props: { onCreated(): void }) {
  const [form, setForm] = useState<{ url: string; events: string[] }>({ url: '', events: [] });
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);
  const { busy, error, run } = useSubmit();
  const create = async () => {
    setCreated(await api<WebhookWithSecret>('/internal/v1/webhooks', { method: 'POST', body: { url: form.url.trim(), events: form.events } }));
    setForm({ url: '', events: [] });
    props.onCreated();
  };
  return (
    <section aria-labelledby="new-webhook">
      <h2 id="new-webhook">New webhook endpoint</h2>
      <form class="stack" onSubmit={(e) => void run(e, create)}>
        <label for="webhook-url">URL</label>
        <input
          id="webhook-url"
          type="url"
          required
          aria-describedby="webhook-url-hint"
          value={form.url}
          onInput={(e) => setForm({ ...form, url: e.currentTarget.value })}
        />
        <p id="webhook-url-hint" class="small muted">
          Where the gateway POSTs each event: an https URL on a public address, unless the gateway allows private ones.
        </p>
        <EventChoices chosen={form.events} onChange={(events) => setForm({ ...form, events })} />
        <button type="submit" disabled={busy}>
          Create endpoint
        </button>
      </form>
      <ErrorAlert error={error} />
      {created && (
        <SecretOnce
          key={created.id}
          id="webhook-secret"
          label="New endpoint secret"
          secret={created.secret}
          note={`It signs every delivery to ${created.url}.`}
        />
      )}
    </section>
  );
}

const sameEvents = (a: string[], b: string[]) => a.length === b.length && a.every((type) => b.includes(type));

/** Changes an endpoint; only what was changed is sent, since a URL sent is checked (and resolved) again. */
export function EditWebhook(props: { webhook: Webhook; onSaved(url: string): void; onCancel(): void }) {
  const { webhook } = props;
  const [form, setForm] = useState({ url: webhook.url, events: webhook.events, enabled: webhook.enabled });
  const { busy, error, run } = useSubmit();
  const urlInput = useRef<HTMLInputElement>(null);
  const opener = useRef(document.activeElement);
  // Opened by a row's Edit button, below the table: the focus follows, for the keyboard and the screen reader, and
  // goes back to that button when the form closes, as a dialog gives it back.
  useEffect(() => {
    urlInput.current?.focus();
    const button = opener.current;
    return () => {
      if (button instanceof HTMLElement && button.isConnected) button.focus();
    };
  }, []);
  const save = async () => {
    const url = form.url.trim();
    const change = {
      ...(url === webhook.url ? {} : { url }),
      ...(sameEvents(form.events, webhook.events) ? {} : { events: form.events }),
      ...(form.enabled === webhook.enabled ? {} : { enabled: form.enabled }),
    };
    if (Object.keys(change).length === 0) throw new Error('Nothing to save: change the URL, the events or whether it is enabled.');
    const saved = await api<Webhook>(webhookPath(webhook), { method: 'PATCH', body: change });
    props.onSaved(saved.url);
  };
  return (
    <section aria-labelledby="edit-webhook">
      <h2 id="edit-webhook">Edit webhook endpoint</h2>
      <p class="small muted">
        <code>{webhook.id}</code>
      </p>
      <form class="stack" onSubmit={(e) => void run(e, save)}>
        <label for="webhook-edit-url">URL</label>
        <input id="webhook-edit-url" ref={urlInput} type="url" required value={form.url} onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} />
        <EventChoices chosen={form.events} onChange={(events) => setForm({ ...form, events })} />
        <label class="check">
          <input
            type="checkbox"
            checked={form.enabled}
            aria-describedby="webhook-enabled-hint"
            onChange={(e) => setForm({ ...form, enabled: e.currentTarget.checked })}
          />
          Enabled
        </label>
        <p id="webhook-enabled-hint" class="small muted">
          A disabled endpoint is sent nothing. The gateway disables one that answers 410 Gone.
        </p>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Save changes
          </button>
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </form>
      <ErrorAlert error={error} />
    </section>
  );
}
