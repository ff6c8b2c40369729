/** Budgets: each budget's spend in its window against its limit, the credit balance, and (admins) policies to add or remove. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Page } from '../components/page.tsx';
import { Meter } from '../components/meter.tsx';
import { ConfirmDialog } from '../components/dialog.tsx';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatMicros, formatTime, parseDollars } from '../format.ts';
import { useSession } from '../session.ts';

interface Budget {
  id: string;
  feature: string | null;
  window: 'hour' | 'day' | 'month';
  limit_micros: number;
  spent_micros: number;
  reserved_micros: number;
  remaining_micros: number;
  resets_at: string;
}

interface Budgets {
  data: Budget[];
  credit: { balance_micros: number; reserved_micros: number } | null;
}

const WINDOWS = { hour: 'Hour', day: 'Day', month: 'Month' } as const;

/** What a budget is called: budgets have no name in the API, so what it covers and its window. */
function nameOf(budget: Budget): string {
  return `${budget.feature === null ? 'Tenant' : `Feature ${budget.feature}`} · ${WINDOWS[budget.window].toLowerCase()}`;
}

/** The Budgets page. */
export function BudgetsPage() {
  const session = useSession();
  const budgets = useLoad((signal) => api<Budgets>('/v1/budgets', { signal }), []);
  const [deleting, setDeleting] = useState<Budget | null>(null);
  const canWrite = session.can('budgets.write');

  const columns: Column<Budget>[] = [
    { header: 'Budget', cell: (b) => nameOf(b) },
    { header: 'Window', cell: (b) => WINDOWS[b.window] },
    { header: 'Used', cell: (b) => <Meter label={nameOf(b)} value={b.spent_micros + b.reserved_micros} max={b.limit_micros} /> },
    { header: 'Spent', cell: (b) => formatMicros(b.spent_micros), numeric: true },
    { header: 'Reserved', cell: (b) => formatMicros(b.reserved_micros), numeric: true },
    { header: 'Remaining', cell: (b) => formatMicros(b.remaining_micros), numeric: true },
    { header: 'Limit', cell: (b) => formatMicros(b.limit_micros), numeric: true },
    { header: 'Resets', cell: (b) => formatTime(b.resets_at) },
  ];
  if (canWrite)
    columns.push({
      header: 'Actions',
      cell: (b) => (
        <button type="button" onClick={() => setDeleting(b)}>
          Delete
        </button>
      ),
    });

  const credit = budgets.data?.credit;
  return (
    <Page title="Budgets">
      <ErrorAlert error={budgets.error} />
      {budgets.loading && !budgets.data && <Loading />}
      {budgets.data && (
        <>
          <p>
            Credit balance:{' '}
            {credit
              ? `${formatMicros(credit.balance_micros)} (${formatMicros(credit.reserved_micros)} held by requests in flight)`
              : 'not enforced for this tenant'}
          </p>
          <Table
            caption="Budgets"
            columns={columns}
            rows={budgets.data.data}
            rowKey={(b) => b.id}
            empty="No budgets: spending is limited only by credits, if any."
          />
        </>
      )}
      {canWrite && <CreateBudget onCreated={budgets.reload} />}
      {deleting && (
        <ConfirmDialog
          title={`Delete the budget ${nameOf(deleting)}?`}
          confirmLabel="Delete budget"
          onConfirm={async () => {
            await api(`/internal/v1/budgets/${encodeURIComponent(deleting.id)}`, { method: 'DELETE' });
            budgets.reload();
          }}
          onClose={() => setDeleting(null)}
        >
          <p>Requests are no longer held to its limit once it is deleted.</p>
        </ConfirmDialog>
      )}
    </Page>
  );
}

function CreateBudget(props: { onCreated(): void }) {
  const [form, setForm] = useState({ limit: '', window: 'day', feature: '' });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const limit = parseDollars(form.limit);
    if (limit === null) return setError(new Error('The limit must be an amount above 0.'));
    setBusy(true);
    setError(null);
    try {
      const body = { window: form.window, limit_micros: limit, feature: form.feature.trim() || null };
      await api('/internal/v1/budgets', { method: 'POST', body });
      setForm({ limit: '', window: form.window, feature: '' });
      props.onCreated();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="new-budget">
      <h2 id="new-budget">New budget</h2>
      <form class="stack" onSubmit={(e) => void submit(e)}>
        <label for="budget-limit">Limit (USD)</label>
        <input
          id="budget-limit"
          type="number"
          min="0.000001"
          step="any"
          required
          value={form.limit}
          onInput={(e) => setForm({ ...form, limit: e.currentTarget.value })}
        />
        <label for="budget-window">Window</label>
        <select id="budget-window" value={form.window} onChange={(e) => setForm({ ...form, window: e.currentTarget.value })}>
          {Object.entries(WINDOWS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <label for="budget-feature">Feature</label>
        <input
          id="budget-feature"
          aria-describedby="budget-feature-hint"
          value={form.feature}
          onInput={(e) => setForm({ ...form, feature: e.currentTarget.value })}
        />
        <p id="budget-feature-hint" class="small muted">
          Optional: the X-Feature value whose spending it limits. Without one the budget covers all of the tenant's spending.
        </p>
        <button type="submit" disabled={busy}>
          Create budget
        </button>
      </form>
      <ErrorAlert error={error} />
    </section>
  );
}
