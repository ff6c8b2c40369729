/** Prompts: the tenant's named prompts, each one's versions (activate, compare), and a form to try the active one. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Page } from '../components/page.tsx';
import { ConfirmDialog } from '../components/dialog.tsx';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';
import { useSession } from '../session.ts';
import type { PromptVersion } from './prompt-types.ts';
import { PromptDiff } from './prompt-diff.tsx';
import { TryIt } from './try-it.tsx';

interface PromptSummary {
  name: string;
  active_version: number;
  latest_version: number;
  updated_at: string;
}

/** The Prompts page. */
export function PromptsPage() {
  const prompts = useLoad((signal) => api<{ data: PromptSummary[] }>('/internal/v1/prompts', { signal }), []);
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <Page title="Prompts">
      <ErrorAlert error={prompts.error} />
      {prompts.loading && !prompts.data && <Loading />}
      {prompts.data &&
        (prompts.data.data.length === 0 ? (
          <p class="muted">No prompts yet: create one with POST /internal/v1/prompts/&#123;name&#125;/versions or the CLI.</p>
        ) : (
          <ul class="chips" aria-label="Prompt names">
            {prompts.data.data.map((prompt) => (
              <li key={prompt.name}>
                <button type="button" aria-pressed={prompt.name === selected} onClick={() => setSelected(prompt.name)}>
                  {prompt.name}
                </button>
              </li>
            ))}
          </ul>
        ))}
      {selected && <PromptDetail key={selected} name={selected} />}
    </Page>
  );
}

interface Versions {
  active_version: number;
  data: PromptVersion[];
}

function PromptDetail({ name }: { name: string }) {
  const session = useSession();
  const versions = useLoad((signal) => api<Versions>(`/internal/v1/prompts/${encodeURIComponent(name)}/versions`, { signal }), [name]);
  const [activating, setActivating] = useState<PromptVersion | null>(null);
  const canWrite = session.can('prompts.write');
  const active = versions.data?.data.find((v) => v.version === versions.data?.active_version);

  const columns: Column<PromptVersion>[] = [
    { header: 'Version', cell: (v) => v.version, numeric: true },
    { header: 'Model', cell: (v) => v.model },
    { header: 'Variables', cell: (v) => v.variables.join(', ') || '—' },
    { header: 'Created', cell: (v) => formatTime(v.created_at) },
    { header: 'Created by', cell: (v) => v.created_by },
    {
      header: 'State',
      cell: (v) =>
        v.version === versions.data?.active_version ? (
          <strong>active</strong>
        ) : canWrite ? (
          <button type="button" onClick={() => setActivating(v)}>
            Activate
          </button>
        ) : (
          'inactive'
        ),
    },
  ];

  return (
    <section aria-labelledby="prompt-title">
      <h2 id="prompt-title">{name}</h2>
      <ErrorAlert error={versions.error} />
      {versions.loading && !versions.data && <Loading />}
      {versions.data && (
        <>
          <Table
            caption="Versions"
            columns={columns}
            rows={[...versions.data.data].sort((a, b) => b.version - a.version)}
            rowKey={(v) => String(v.version)}
            empty="No versions."
          />
          {versions.data.data.length > 0 && <PromptDiff versions={versions.data.data} />}
          {active && session.can('chat.create') && <TryIt name={name} variables={active.variables} />}
        </>
      )}
      {activating && (
        <ConfirmDialog
          title={`Activate version ${activating.version} of ${name}?`}
          confirmLabel="Activate version"
          onConfirm={async () => {
            await api(`/internal/v1/prompts/${encodeURIComponent(name)}/activate`, { method: 'POST', body: { version: activating.version } });
            versions.reload();
          }}
          onClose={() => setActivating(null)}
        >
          <p>Requests naming this prompt use version {activating.version} from now on.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
