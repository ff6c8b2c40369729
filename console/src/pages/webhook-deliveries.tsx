/** One webhook endpoint's recent delivery attempts. */
import { api } from '../api.ts';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';
import { webhookPath, type Webhook } from './webhook-types.ts';

interface Delivery {
  id: string;
  event_type: string;
  attempt: number;
  status: string;
  http_status: number | null;
  latency_ms: number | null;
  error: string | null;
  created_at: string;
}

const DELIVERY_COLUMNS: Column<Delivery>[] = [
  { header: 'Time', cell: (d) => formatTime(d.created_at) },
  { header: 'Event', cell: (d) => d.event_type },
  { header: 'Attempt', cell: (d) => d.attempt, numeric: true },
  { header: 'Status', cell: (d) => d.status },
  { header: 'HTTP', cell: (d) => d.http_status ?? '—', numeric: true },
  { header: 'Latency (ms)', cell: (d) => d.latency_ms ?? '—', numeric: true },
  { header: 'Error', cell: (d) => d.error ?? '—', wrap: true },
];

/** The endpoint's last 20 attempts, newest first. */
export function Deliveries({ webhook }: { webhook: Webhook }) {
  const deliveries = useLoad((signal) => api<{ data: Delivery[] }>(`${webhookPath(webhook)}/deliveries`, { query: { limit: 20 }, signal }), [webhook.id]);
  return (
    <section aria-label={`Deliveries to ${webhook.url}`}>
      <p class="small muted">Deliveries to {webhook.url}</p>
      <ErrorAlert error={deliveries.error} />
      {deliveries.loading && !deliveries.data && <Loading />}
      {deliveries.data && (
        <Table caption="Recent deliveries" columns={DELIVERY_COLUMNS} rows={deliveries.data.data} rowKey={(d) => d.id} empty="No deliveries yet." />
      )}
    </section>
  );
}
