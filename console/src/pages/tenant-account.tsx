/** A tenant's money and limits: credit top-ups and the plan's rate limits (operator only). */
import { useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorAlert } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatMicros, parseDollars } from '../format.ts';
import type { Tenant } from './tenants.tsx';

// The smallest value each limit takes: 0 is "no limit" for the rates; a queue cap is at least 1.
const PLAN_FIELDS = [
  ['requests_per_minute', 'Requests per minute', 0],
  ['tokens_per_minute', 'Tokens per minute', 0],
  ['key_requests_per_minute', 'Requests per minute per key', 0],
  ['key_tokens_per_minute', 'Tokens per minute per key', 0],
  ['max_queued', 'Max queued requests', 1],
] as const;

type PlanField = (typeof PLAN_FIELDS)[number][0];

interface Account {
  credit: { balance_micros: number; reserved_micros: number } | null;
  plan: Record<PlanField, number | null> & { tenant: string };
}

/** The tenant's credit and plan as they are now; the plan's fields start from it. */
async function loadAccount(path: string, signal: AbortSignal): Promise<Account> {
  const [budgets, plan] = await Promise.all([
    api<{ credit: Account['credit'] }>(`${path}/budgets`, { signal }),
    api<Account['plan']>(`${path}/plan`, { signal }),
  ]);
  return { credit: budgets.credit, plan };
}

/** A tenant chosen from `tenants`: its credit balance, a top-up, and its plan's limits. */
export function TenantAccount(props: { tenants: Tenant[] }) {
  const [tenant, setTenant] = useState(props.tenants[0]?.id ?? '');
  return (
    <section aria-labelledby="account-title">
      <h2 id="account-title">Credits and plan</h2>
      <div class="stack">
        <label for="account-tenant">Tenant</label>
        <select id="account-tenant" value={tenant} onChange={(e) => setTenant(e.currentTarget.value)}>
          {props.tenants.map((t) => (
            <option key={t.id} value={t.id}>
              {t.id}
            </option>
          ))}
        </select>
      </div>
      {/* A new tenant is a new form: nothing read of the previous one can be shown, or sent, as this one's. */}
      {tenant !== '' && <AccountForms key={tenant} tenant={tenant} />}
    </section>
  );
}

function AccountForms({ tenant }: { tenant: string }) {
  const [amount, setAmount] = useState('');
  const [busy, setBusy] = useState(false);
  // One top-up's id, kept until it succeeds: a second click or a retry after an error counts once (the API's idempotent top-up).
  const topUpId = useRef(crypto.randomUUID());
  const [plan, setPlan] = useState<Record<string, string>>({});
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(null);
  const path = `/internal/v1/tenants/${encodeURIComponent(tenant)}`;
  const account = useLoad(
    async (signal) => {
      const loaded = await loadAccount(path, signal);
      if (signal.aborted) return loaded;
      setPlan(Object.fromEntries(PLAN_FIELDS.map(([field]) => [field, loaded.plan[field] === null ? '' : String(loaded.plan[field])])));
      return loaded;
    },
    [tenant],
  );
  const credit = account.data?.credit;
  const ready = account.data !== undefined && !account.loading && account.error === null && !busy;

  const run = async (event: Event, action: () => Promise<string>) => {
    event.preventDefault();
    setError(null);
    setMessage('');
    setBusy(true);
    try {
      setMessage(await action());
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const addCredit = async () => {
    const micros = parseDollars(amount);
    if (micros === null) throw new Error('The amount must be above 0.');
    await api(`${path}/credits`, { method: 'POST', body: { amount_micros: micros, id: topUpId.current } });
    topUpId.current = crypto.randomUUID();
    setAmount('');
    account.reload();
    return `Added ${formatMicros(micros)} of credit to ${tenant}.`;
  };
  const setLimits = async () => {
    // A blank field leaves that limit to the configured default; 0 means no limit.
    const edited = Object.fromEntries(PLAN_FIELDS.map(([field]) => [field, plan[field]?.trim() ? Number(plan[field]) : null]));
    // PUT replaces the whole plan: the fields this form does not show are sent back as they were read.
    const { object: _object, tenant: _tenant, ...others } = (account.data as Account).plan as Record<string, unknown>;
    const body = { ...others, ...edited };
    await api(`${path}/plan`, { method: 'PUT', body });
    account.reload();
    return `Plan of ${tenant} set.`;
  };

  return (
    <>
      <ErrorAlert error={account.error} />
      {account.data && (
        <p>
          Credit balance of {tenant}:{' '}
          {credit ? `${formatMicros(credit.balance_micros)} (${formatMicros(credit.reserved_micros)} held by requests in flight)` : 'no credit account'}
        </p>
      )}
      <form class="filters" aria-label="Credit top-up" onSubmit={(e) => void run(e, addCredit)}>
        <div>
          <label for="credit-amount">Amount (USD)</label>
          <input id="credit-amount" type="number" min="0.000001" step="any" required value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
        </div>
        <button type="submit" disabled={!ready}>
          Add credit
        </button>
      </form>
      <form class="stack" aria-label="Plan" onSubmit={(e) => void run(e, setLimits)}>
        <p class="small muted">Plan limits: a blank field uses the gateway's default; 0 means no limit, except for the queue, which holds at least 1.</p>
        {PLAN_FIELDS.map(([field, label, min]) => (
          <div key={field} class="stack">
            <label for={`plan-${field}`}>{label}</label>
            <input
              id={`plan-${field}`}
              type="number"
              min={min}
              step="1"
              value={plan[field] ?? ''}
              onInput={(e) => setPlan({ ...plan, [field]: e.currentTarget.value })}
            />
          </div>
        ))}
        <button type="submit" disabled={!ready}>
          Set plan
        </button>
      </form>
      <p aria-live="polite">{message}</p>
      <ErrorAlert error={error} />
    </>
  );
}
