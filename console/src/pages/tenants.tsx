/** Tenants (the operator's admins): create, disable and enable, top up credits, set a plan's limits. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Page } from '../components/page.tsx';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';
import { useSession } from '../session.ts';
import { TenantAccount } from './tenant-account.tsx';

/** A tenant as the API lists it. */
export interface Tenant {
  id: string;
  name: string;
  disabled: boolean;
  created_at: string;
}

/** The Tenants page. */
export function TenantsPage() {
  const session = useSession();
  const tenants = useLoad((signal) => api<{ data: Tenant[] }>('/internal/v1/tenants', { signal }), []);
  const [rowError, setRowError] = useState<unknown>(null);
  const toggle = async (tenant: Tenant) => {
    setRowError(null);
    try {
      await api(`/internal/v1/tenants/${encodeURIComponent(tenant.id)}`, { method: 'PATCH', body: { disabled: !tenant.disabled } });
      tenants.reload();
    } catch (error) {
      setRowError(error);
    }
  };
  const columns: Column<Tenant>[] = [
    { header: 'Tenant ID', cell: (t) => <code>{t.id}</code> },
    { header: 'Name', cell: (t) => t.name },
    { header: 'Status', cell: (t) => (t.disabled ? 'disabled' : 'enabled') },
    { header: 'Created', cell: (t) => formatTime(t.created_at) },
    {
      header: 'Actions',
      // The operator's own tenant cannot be disabled: nobody could enable it again.
      cell: (t) =>
        t.id === session.me.tenant.id ? (
          '—'
        ) : (
          <button type="button" onClick={() => void toggle(t)}>
            {t.disabled ? 'Enable' : 'Disable'}
          </button>
        ),
    },
  ];
  return (
    <Page title="Tenants">
      <ErrorAlert error={tenants.error} />
      {tenants.loading && !tenants.data && <Loading />}
      <ErrorAlert error={rowError} />
      {tenants.data && (
        <>
          <Table caption="Tenants" columns={columns} rows={tenants.data.data} rowKey={(t) => t.id} empty="No tenants." />
          <TenantAccount tenants={tenants.data.data} />
        </>
      )}
      <CreateTenant onCreated={tenants.reload} />
    </Page>
  );
}

function CreateTenant(props: { onCreated(): void }) {
  const [form, setForm] = useState({ id: '', name: '' });
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const id = form.id.trim();
      await api('/internal/v1/tenants', { method: 'POST', body: { id, ...(form.name.trim() ? { name: form.name.trim() } : {}) } });
      setForm({ id: '', name: '' });
      setDone(`Tenant ${id} created.`);
      props.onCreated();
    } catch (failure) {
      setDone('');
      setError(failure);
    }
  };
  return (
    <section aria-labelledby="new-tenant">
      <h2 id="new-tenant">New tenant</h2>
      <form class="stack" onSubmit={(e) => void submit(e)}>
        <label for="tenant-id">Tenant ID</label>
        <input
          id="tenant-id"
          required
          pattern="[a-z0-9][a-z0-9_\-]{0,62}"
          aria-describedby="tenant-id-hint"
          value={form.id}
          onInput={(e) => setForm({ ...form, id: e.currentTarget.value })}
        />
        <p id="tenant-id-hint" class="small muted">
          Lower-case letters, digits, - and _; it cannot be changed later.
        </p>
        <label for="tenant-name">Name</label>
        <input id="tenant-name" maxLength={200} value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        <button type="submit">Create tenant</button>
      </form>
      <p aria-live="polite">{done}</p>
      <ErrorAlert error={error} />
    </section>
  );
}
