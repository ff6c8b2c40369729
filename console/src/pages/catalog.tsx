/** Catalog (the operator's admins): each model alias, its deployments and their circuit breakers, and the tiers. Never provider keys. */
import { Fragment } from 'preact';
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

interface Tier {
  name: string;
  candidates: string[];
}

interface Catalog {
  data: Model[];
  tiers: Tier[];
}

/** Where a tier's candidate links to: its row of the Models table. */
const modelAnchor = (alias: string) => `model-${alias}`;

function limits(d: Deployment): string {
  const parts = [
    d.weight === null ? null : `weight ${d.weight}`,
    d.rpm === null ? null : `${formatCount(d.rpm)} rpm`,
    d.tpm === null ? null : `${formatCount(d.tpm)} tpm`,
  ];
  return parts.filter((part) => part !== null).join(', ');
}

const COLUMNS: Column<Model>[] = [
  {
    header: 'Alias',
    cell: (m) => <code id={modelAnchor(m.alias)}>{m.alias}</code>,
  },
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

/** A candidate's breakers at a glance: one state when its deployments share it, else each deployment's in order. */
function Circuits({ model }: { model: Model }) {
  const states = model.deployments.map((d) => d.circuit);
  const shown = states.every((state) => state === states[0]) ? states.slice(0, 1) : states;
  return (
    <>
      {shown.length > 1 ? 'circuits ' : 'circuit '}
      {shown.map((state, i) => (
        <Fragment key={i}>
          {i > 0 && ', '}
          <span class={`circuit ${state}`}>{state}</span>
        </Fragment>
      ))}
    </>
  );
}

function tierColumns(models: Model[]): Column<Tier>[] {
  const byAlias = new Map(models.map((m) => [m.alias, m]));
  return [
    { header: 'Tier', cell: (t) => <code>{t.name}</code> },
    {
      header: 'Candidates, in the order tried',
      wrap: true,
      cell: (t) => (
        <ol class="candidates">
          {t.candidates.map((alias) => {
            const model = byAlias.get(alias);
            return (
              <li key={alias}>
                <a href={`#${modelAnchor(alias)}`}>
                  <code>{alias}</code>
                </a>
                {model && (
                  <>
                    {': '}
                    <Circuits model={model} />
                  </>
                )}
              </li>
            );
          })}
        </ol>
      ),
    },
  ];
}

/** The Catalog page. */
export function CatalogPage() {
  const catalog = useLoad((signal) => api<Catalog>('/internal/v1/catalog', { signal }), []);
  const data = catalog.data;
  return (
    <Page title="Catalog">
      <ErrorAlert error={catalog.error} />
      {catalog.loading && !data && <Loading />}
      {data && (
        <>
          <Table caption="Models" columns={COLUMNS} rows={data.data} rowKey={(m) => m.alias} empty="No models in the catalog." />
          <Table caption="Tiers" columns={tierColumns(data.data)} rows={data.tiers} rowKey={(t) => t.name} empty="No tiers in the catalog." />
        </>
      )}
    </Page>
  );
}
