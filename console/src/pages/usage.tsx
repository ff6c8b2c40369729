/** Usage: sums by day, model or feature as charts, and the recent requests, downloadable as CSV. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Page } from '../components/page.tsx';
import { BarChart } from '../components/chart.tsx';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { usePaged, type ListPage } from '../components/use-paged.ts';
import { LoadMore } from '../components/load-more.tsx';
import { formatCount, formatMicros, formatTime, utcDay } from '../format.ts';
import { toCsv } from '../csv.ts';
import { download } from '../download.ts';

type GroupBy = 'day' | 'model' | 'feature';

interface UsageGroup {
  day?: string;
  model?: string;
  feature?: string | null;
  requests: number;
  total_tokens: number;
  cost_micros: number;
}

interface UsageRecord {
  request_id: string;
  created_at: string;
  model: string;
  feature: string | null;
  status: string;
  latency_ms: number;
  queue_wait_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_micros: number;
  usage_source: string;
  cache_hit: boolean;
}

interface Query {
  since: string;
  until: string;
  groupBy: GroupBy;
}

const COLUMNS: Column<UsageRecord>[] = [
  { header: 'Time', cell: (r) => formatTime(r.created_at) },
  { header: 'Model', cell: (r) => r.model },
  { header: 'Status', cell: (r) => r.status },
  { header: 'Latency (ms)', cell: (r) => formatCount(Math.round(r.latency_ms)), numeric: true },
  { header: 'Queue wait (ms)', cell: (r) => formatCount(Math.round(r.queue_wait_ms)), numeric: true },
  { header: 'Tokens', cell: (r) => formatCount(r.total_tokens), numeric: true },
  { header: 'Cost', cell: (r) => formatMicros(r.cost_micros), numeric: true },
  { header: 'Usage source', cell: (r) => (r.cache_hit ? `${r.usage_source} (cache hit)` : r.usage_source) },
];

const CSV_HEADER = [
  'created_at',
  'request_id',
  'model',
  'feature',
  'status',
  'latency_ms',
  'queue_wait_ms',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cost_usd',
  'usage_source',
  'cache_hit',
];

function csvOf(records: UsageRecord[]): string {
  return toCsv(
    CSV_HEADER,
    records.map((r) => [
      r.created_at,
      r.request_id,
      r.model,
      r.feature,
      r.status,
      r.latency_ms,
      r.queue_wait_ms,
      r.prompt_tokens,
      r.completion_tokens,
      r.total_tokens,
      r.cost_micros / 1e6,
      r.usage_source,
      r.cache_hit,
    ]),
  );
}

/** The days from `since` to `until`, both included (at most a year): a day without requests is a bar of 0, not a gap. */
function daysOf(since: string, until: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(since), end = Date.parse(until); t <= end && days.length < 366; t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

function groupLabel(group: UsageGroup, groupBy: GroupBy): string {
  if (groupBy === 'feature') return group.feature ?? '(none)';
  return (groupBy === 'day' ? group.day : group.model) ?? '';
}

/** The Usage page. */
export function UsagePage() {
  const [form, setForm] = useState<Query>({ since: utcDay(6), until: utcDay(0), groupBy: 'day' });
  const [query, setQuery] = useState<Query>(form);
  const range = { since: query.since, until: query.until };
  const groups = useLoad((signal) => api<{ data: UsageGroup[] }>('/v1/usage', { query: { ...range, group_by: query.groupBy }, signal }), [query]);
  const paged = usePaged(
    (cursor, signal) => api<ListPage<UsageRecord>>('/v1/usage', { query: { ...range, limit: 100, cursor }, ...(signal ? { signal } : {}) }),
    [query],
  );
  const recent = paged.first;
  const records = paged.rows;

  const apply = (event: Event) => {
    event.preventDefault();
    setQuery({ ...form });
  };
  const series = query.groupBy === 'day';
  const bars = (value: (g: UsageGroup) => number) => {
    const found = (groups.data?.data ?? []).map((g) => ({ label: groupLabel(g, query.groupBy), value: value(g) }));
    if (!series) return found;
    const byDay = new Map(found.map((bar) => [bar.label, bar.value]));
    return daysOf(query.since, query.until).map((day) => ({ label: day, value: byDay.get(day) ?? 0 }));
  };

  return (
    <Page title="Usage">
      <form class="filters" onSubmit={apply}>
        <div>
          <label for="usage-from">From</label>
          <input id="usage-from" type="date" required value={form.since} onInput={(e) => setForm({ ...form, since: e.currentTarget.value })} />
        </div>
        <div>
          <label for="usage-to">To</label>
          <input id="usage-to" type="date" required value={form.until} onInput={(e) => setForm({ ...form, until: e.currentTarget.value })} />
        </div>
        <div>
          <label for="usage-group">Group by</label>
          <select id="usage-group" value={form.groupBy} onChange={(e) => setForm({ ...form, groupBy: e.currentTarget.value as GroupBy })}>
            <option value="day">Day</option>
            <option value="model">Model</option>
            <option value="feature">Feature</option>
          </select>
        </div>
        <button type="submit">Apply</button>
      </form>
      <p class="small muted">Days are UTC; both ends are included.</p>

      {/* One loading state and one error for the page's two requests, which ask about the same period. */}
      <ErrorAlert error={groups.error ?? recent.error} />
      {(groups.loading && !groups.data) || (recent.loading && !recent.data) ? (
        <Loading />
      ) : (
        <>
          {groups.data &&
            (groups.data.data.length === 0 ? (
              <p class="muted">No usage in this period.</p>
            ) : (
              <div class="charts">
                <BarChart caption="Requests" bars={bars((g) => g.requests)} format={formatCount} series={series} />
                <BarChart caption="Tokens" bars={bars((g) => g.total_tokens)} format={formatCount} series={series} />
                <BarChart caption="Cost" bars={bars((g) => g.cost_micros)} format={formatMicros} series={series} />
              </div>
            ))}
          {recent.data && (
            <>
              <div class="actions">
                <button type="button" onClick={() => download(`usage-${query.since}-${query.until}.csv`, csvOf(records))}>
                  Download CSV
                </button>
                <span class="small muted">{records.length} requests shown</span>
              </div>
              <Table caption="Recent requests" columns={COLUMNS} rows={records} rowKey={(r) => r.request_id} empty="No requests in this period." />
              <LoadMore paged={paged} />
            </>
          )}
        </>
      )}
    </Page>
  );
}
