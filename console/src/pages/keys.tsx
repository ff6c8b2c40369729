/** API keys of the tenant: list, create (its secret shown once), revoke. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Page } from '../components/page.tsx';
import { ConfirmDialog } from '../components/dialog.tsx';
import { SecretOnce } from '../components/secret-once.tsx';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';
import { useSession } from '../session.ts';

interface ApiKey {
  id: string;
  name: string | null;
  role: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at?: string | null;
}

const ROLES = ['developer', 'app', 'auditor', 'admin'];

const label = (key: ApiKey) => key.name ?? key.id;

/** The Keys page. */
export function KeysPage() {
  const session = useSession();
  const keys = useLoad((signal) => api<{ data: ApiKey[] }>('/internal/v1/keys', { signal }), []);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const canWrite = session.can('keys.write');

  const columns: Column<ApiKey>[] = [
    { header: 'Name', cell: (k) => k.name ?? <span class="muted">{k.id}</span> },
    { header: 'Role', cell: (k) => k.role },
    { header: 'Created', cell: (k) => formatTime(k.created_at) },
    { header: 'Expires', cell: (k) => (k.expires_at ? formatTime(k.expires_at) : 'never') },
    { header: 'Last used', cell: (k) => formatTime(k.last_used_at) },
    {
      header: 'Status',
      cell: (k) =>
        k.revoked_at ? (
          `revoked ${formatTime(k.revoked_at)}`
        ) : canWrite ? (
          <button type="button" onClick={() => setRevoking(k)}>
            Revoke
          </button>
        ) : (
          'active'
        ),
    },
  ];

  return (
    <Page title="Keys">
      <ErrorAlert error={keys.error} />
      {keys.loading && !keys.data && <Loading />}
      {keys.data && <Table caption="API keys" columns={columns} rows={keys.data.data} rowKey={(k) => k.id} empty="No API keys." />}
      {canWrite && <CreateKey onCreated={keys.reload} />}
      {revoking && (
        <ConfirmDialog
          title={`Revoke the key ${label(revoking)}?`}
          confirmLabel="Revoke key"
          onConfirm={async () => {
            await api(`/internal/v1/keys/${encodeURIComponent(revoking.id)}`, { method: 'DELETE' });
            keys.reload();
          }}
          onClose={() => setRevoking(null)}
        >
          <p>Every request made with it is refused from now on. This cannot be undone.</p>
          {revoking.id === session.me.key_id && (
            <p>
              <strong>This is the key this console signed in with:</strong> you will have to sign in again with another.
            </p>
          )}
        </ConfirmDialog>
      )}
    </Page>
  );
}

function CreateKey(props: { onCreated(): void }) {
  const [form, setForm] = useState({ name: '', role: 'developer' });
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await api<{ secret: string }>('/internal/v1/keys', { method: 'POST', body: { role: form.role, name: form.name.trim() || null } });
      setSecret(created.secret);
      setForm({ ...form, name: '' });
      props.onCreated();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="new-key">
      <h2 id="new-key">New key</h2>
      <form class="stack" onSubmit={(e) => void submit(e)}>
        <label for="key-name">Name</label>
        <input id="key-name" maxLength={200} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        <label for="key-role">Role</label>
        <select id="key-role" value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value })}>
          {ROLES.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
      <ErrorAlert error={error} />
      {/* Keyed by the secret: a new key's field starts without the last one's "Copied." */}
      {secret && <SecretOnce key={secret} id="key-secret" label="New key secret" secret={secret} />}
    </section>
  );
}
