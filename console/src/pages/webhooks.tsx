/** The tenant's webhook endpoints (`webhooks.manage`): the list, and registering, changing, rotating the secret of and deleting one. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ConfirmDialog } from '../components/dialog.tsx';
import { SecretOnce } from '../components/secret-once.tsx';
import { Table, type Column } from '../components/table.tsx';
import { formatTime } from '../format.ts';
import { Deliveries } from './webhook-deliveries.tsx';
import { CreateWebhook, EditWebhook } from './webhook-form.tsx';
import { webhookPath, type Webhook, type WebhookWithSecret } from './webhook-types.ts';

/** What a row's button opened; rows are named by id, so that a reloaded list shows the endpoint as it now is. */
interface Opened {
  deliveries: string | null;
  editing: string | null;
  deleting: Webhook | null;
  rotating: Webhook | null;
}

const NONE: Opened = { deliveries: null, editing: null, deleting: null, rotating: null };

/** The endpoints' table with each row's actions, the form open on one of them, and the New webhook endpoint form. */
export function WebhookEndpoints(props: { webhooks: Webhook[]; onChanged(): void }) {
  const [opened, setOpened] = useState<Opened>(NONE);
  const [rotated, setRotated] = useState<WebhookWithSecret | null>(null);
  const [notice, setNotice] = useState('');
  const open = (change: Partial<Opened>) => setOpened((previous) => ({ ...previous, ...change }));
  const byId = (id: string | null) => props.webhooks.find((webhook) => webhook.id === id);
  const shown = byId(opened.deliveries);
  const editing = byId(opened.editing);
  const { deleting, rotating } = opened;

  const columns: Column<Webhook>[] = [
    { header: 'URL', cell: (w) => w.url },
    { header: 'Events', cell: (w) => w.events.join(', '), wrap: true },
    { header: 'Enabled', cell: (w) => (w.enabled ? 'yes' : 'no') },
    { header: 'Created', cell: (w) => formatTime(w.created_at) },
    {
      header: 'Actions',
      cell: (w) => (
        <div class="buttons">
          <button type="button" aria-pressed={shown?.id === w.id} onClick={() => open({ deliveries: w.id })}>
            Deliveries
          </button>
          <button type="button" aria-pressed={editing?.id === w.id} onClick={() => open({ editing: w.id })}>
            Edit
          </button>
          <button type="button" onClick={() => open({ rotating: w })}>
            Rotate secret
          </button>
          <button type="button" onClick={() => open({ deleting: w })}>
            Delete
          </button>
        </div>
      ),
    },
  ];

  return (
    <>
      <Table caption="Webhook endpoints" columns={columns} rows={props.webhooks} rowKey={(w) => w.id} empty="No webhook endpoints." />
      <p aria-live="polite">{notice}</p>
      {rotated && (
        <SecretOnce
          key={rotated.secret}
          id="webhook-rotated-secret"
          label={`New secret of ${rotated.url}`}
          secret={rotated.secret}
          note={rotated.previous_secret_expires_at ? `The previous one also signs deliveries until ${formatTime(rotated.previous_secret_expires_at)}.` : ''}
        />
      )}
      {editing && (
        <EditWebhook
          key={editing.id}
          webhook={editing}
          onSaved={(url) => {
            setNotice(`Saved the changes to ${url}.`);
            open({ editing: null });
            props.onChanged();
          }}
          onCancel={() => open({ editing: null })}
        />
      )}
      {shown && <Deliveries key={shown.id} webhook={shown} />}
      <CreateWebhook onCreated={props.onChanged} />
      {deleting && (
        <ConfirmDialog
          title={`Delete the webhook endpoint ${deleting.url}?`}
          confirmLabel="Delete endpoint"
          onConfirm={async () => {
            await api(webhookPath(deleting), { method: 'DELETE' });
            setNotice(`Deleted the endpoint ${deleting.url}.`);
            props.onChanged();
          }}
          onClose={() => open({ deleting: null })}
        >
          <p>Nothing more is sent to it: deliveries still queued for it are dropped, and its record of deliveries is deleted. This cannot be undone.</p>
        </ConfirmDialog>
      )}
      {rotating && (
        <ConfirmDialog
          title={`Rotate the secret of ${rotating.url}?`}
          confirmLabel="Rotate secret"
          onConfirm={async () => {
            setRotated(await api<WebhookWithSecret>(`${webhookPath(rotating)}/rotate-secret`, { method: 'POST' }));
            props.onChanged();
          }}
          onClose={() => open({ rotating: null })}
        >
          <p>A new secret signs its deliveries from now on. The current one signs them too for 24 hours, while the receiver moves to the new one.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
