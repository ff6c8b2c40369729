/** Queue (the operator's admins): the jobs of each queue shard and the workers seen lately. */
import { api } from '../api.ts';
import { Page } from '../components/page.tsx';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatCount, formatTime } from '../format.ts';

interface Shard {
  shard: number;
  waiting: number;
  prioritized?: number;
  active: number;
  delayed: number;
  failed: number;
  workers?: number;
}

interface Worker {
  id: string;
  shard?: number;
  addr?: string;
  last_seen: string;
}

interface Queues {
  shards: Shard[];
  workers: Worker[];
  board: string;
}

const count = (value: number | undefined) => (value === undefined ? '—' : formatCount(value));

const SHARD_COLUMNS: Column<Shard>[] = [
  { header: 'Shard', cell: (s) => s.shard, numeric: true },
  { header: 'Waiting', cell: (s) => formatCount(s.waiting), numeric: true },
  { header: 'Prioritized', cell: (s) => count(s.prioritized), numeric: true },
  { header: 'Active', cell: (s) => formatCount(s.active), numeric: true },
  { header: 'Delayed', cell: (s) => formatCount(s.delayed), numeric: true },
  { header: 'Failed', cell: (s) => formatCount(s.failed), numeric: true },
  { header: 'Workers', cell: (s) => count(s.workers), numeric: true },
];

const WORKER_COLUMNS: Column<Worker>[] = [
  { header: 'Worker', cell: (w) => <code>{w.id}</code> },
  { header: 'Shard', cell: (w) => w.shard ?? '—', numeric: true },
  { header: 'Address', cell: (w) => w.addr ?? '—' },
  { header: 'Last seen', cell: (w) => formatTime(w.last_seen) },
];

/** The Queue page. */
export function QueuePage() {
  const queues = useLoad((signal) => api<Queues>('/internal/v1/queues', { signal }), []);
  return (
    <Page title="Queue">
      <div class="actions">
        <button type="button" disabled={queues.loading} onClick={queues.reload}>
          Refresh
        </button>
        {queues.data && (
          // The board asks for the key as a Basic password: a page of its own, not part of this one.
          <a href={queues.data.board} target="_blank" rel="noopener">
            Queue board
          </a>
        )}
      </div>
      <ErrorAlert error={queues.error} />
      {queues.loading && !queues.data && <Loading />}
      {queues.data && (
        <>
          <Table caption="Queue shards" columns={SHARD_COLUMNS} rows={queues.data.shards} rowKey={(s) => String(s.shard)} empty="No queue shards." />
          <Table
            caption="Workers"
            columns={WORKER_COLUMNS}
            rows={queues.data.workers}
            rowKey={(w) => `${w.shard ?? ''}:${w.id}`}
            empty="No workers seen lately."
          />
        </>
      )}
    </Page>
  );
}
