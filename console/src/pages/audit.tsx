/** Audit: the tenant's audit events, newest first, filtered by action and time, and a check of the hash chain. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Page } from '../components/page.tsx';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { usePaged, type ListPage } from '../components/use-paged.ts';
import { LoadMore } from '../components/load-more.tsx';
import { formatTime } from '../format.ts';
import { useSession } from '../session.ts';

interface AuditEvent {
  id: string;
  seq: number;
  actor: string;
  action: string;
  target: string | null;
  outcome: string;
  request_id: string | null;
  created_at: string;
}

interface Verification {
  ok: boolean;
  events: number;
  broken_at?: number;
  reason?: string;
}

const COLUMNS: Column<AuditEvent>[] = [
  { header: 'Seq', cell: (e) => e.seq, numeric: true },
  { header: 'Time', cell: (e) => formatTime(e.created_at) },
  { header: 'Actor', cell: (e) => e.actor },
  { header: 'Action', cell: (e) => e.action },
  { header: 'Target', cell: (e) => e.target ?? '—' },
  { header: 'Outcome', cell: (e) => e.outcome },
  { header: 'Request ID', cell: (e) => (e.request_id ? <code>{e.request_id}</code> : '—') },
];

/** The Audit page. */
export function AuditPage() {
  const session = useSession();
  const [form, setForm] = useState({ action: '', since: '' });
  const [filter, setFilter] = useState(form);
  const query = { action: filter.action.trim(), since: filter.since, limit: 100 };
  const paged = usePaged((cursor, signal) => api<ListPage<AuditEvent>>('/v1/audit', { query: { ...query, cursor }, ...(signal ? { signal } : {}) }), [filter]);
  const { first, rows: events } = paged;
  const apply = (event: Event) => {
    event.preventDefault();
    setFilter({ ...form });
  };

  return (
    <Page title="Audit">
      {session.can('audit.verify') && <VerifyChain />}
      <form class="filters" onSubmit={apply}>
        <div>
          <label for="audit-action">Action</label>
          <input id="audit-action" placeholder="e.g. key.created" value={form.action} onInput={(e) => setForm({ ...form, action: e.currentTarget.value })} />
        </div>
        <div>
          <label for="audit-since">Since</label>
          <input id="audit-since" type="date" value={form.since} onInput={(e) => setForm({ ...form, since: e.currentTarget.value })} />
        </div>
        <button type="submit">Apply</button>
      </form>
      <ErrorAlert error={first.error} />
      {first.loading && !first.data ? (
        <Loading />
      ) : (
        first.data && (
          <>
            <Table caption="Audit events" columns={COLUMNS} rows={events} rowKey={(e) => e.id} empty="No audit events match." />
            <LoadMore paged={paged} />
          </>
        )
      )}
    </Page>
  );
}

function VerifyChain() {
  const [result, setResult] = useState<string>('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const verify = async () => {
    setBusy(true);
    setError(null);
    setResult('Verifying…');
    try {
      const answer = await api<Verification>('/internal/v1/audit/verify');
      setResult(
        answer.ok
          ? `Chain verified: ${answer.events} events, every hash links to the one before.`
          : `Chain broken at event ${answer.broken_at ?? '?'}: ${answer.reason ?? 'a hash does not match'} (${answer.events} events read).`,
      );
    } catch (failure) {
      setResult('');
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="actions">
      <button type="button" disabled={busy} onClick={() => void verify()}>
        Verify chain
      </button>
      {result && <p role="status">{result}</p>}
      <ErrorAlert error={error} />
    </div>
  );
}
