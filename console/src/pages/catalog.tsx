/** Catalog (the operator's admins): each model alias, its deployments and their circuit breakers. Never provider keys. */
import { api } from '../api.ts';
import { Page } from '../components/page.tsx';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatCount, formatTime } from '../format.ts';

interface Deployment {
  id: string;
  provider: string;
  weight: number | null;
  rpm: number | null;
  tpm: number | null;
  circuit: 'closed' | 'open' | 'half_open';
  reopens_at?: string | null;
}

interface Model {
  alias: string;
  kind: string;
  provider: string;
  upstream_model: string;
  context_window: number | null;
  routing: string | null;
  deployments: Deployment[];
}

function limits(d: Deployment): string {
  const parts = [
    d.weight === null ? null : `weight ${d.weight}`,
    d.rpm === null ? null : `${formatCount(d.rpm)} rpm`,
    d.tpm === null ? null : `${formatCount(d.tpm)} tpm`,
  ];
  return parts.filter((part) => part !== null).join(', ');
}

const COLUMNS: Column<Model>[] = [
  { header: 'Alias', cell: (m) => <code>{m.alias}</code> },
  { header: 'Kind', cell: (m) => m.kind },
  { header: 'Provider', cell: (m) => m.provider },
  { header: 'Upstream model', cell: (m) => m.upstream_model },
  { header: 'Context window', cell: (m) => (m.context_window === null ? '—' : formatCount(m.context_window)), numeric: true },
  { header: 'Routing', cell: (m) => m.routing ?? '—' },
  {
    header: 'Deployments',
    wrap: true,
    cell: (m) => (
      <ul class="plain">
        {m.deployments.map((d) => (
          <li key={d.id}>
            <code>{d.id}</code> {d.provider}
            {limits(d) && ` (${limits(d)})`}: circuit <span class={`circuit ${d.circuit}`}>{d.circuit}</span>
            {d.reopens_at && ` until ${formatTime(d.reopens_at)}`}
          </li>
        ))}
      </ul>
    ),
  },
];

/** The Catalog page. */
export function CatalogPage() {
  const catalog = useLoad((signal) => api<{ data: Model[] }>('/internal/v1/catalog', { signal }), []);
  return (
    <Page title="Catalog">
      <ErrorAlert error={catalog.error} />
      {catalog.loading && !catalog.data && <Loading />}
      {catalog.data && <Table caption="Models" columns={COLUMNS} rows={catalog.data.data} rowKey={(m) => m.alias} empty="No models in the catalog." />}
    </Page>
  );
}
