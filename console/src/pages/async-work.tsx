/** Async work: batches (OpenAI's and Anthropic's), webhook endpoints (managed in webhooks.tsx), and a stored response by id. */
import { api } from '../api.ts';
import { Page } from '../components/page.tsx';
import { Table, type Column } from '../components/table.tsx';
import { ErrorAlert, Loading } from '../components/status.tsx';
import { useLoad } from '../components/use-load.ts';
import { formatTime } from '../format.ts';
import { useSession, type Session } from '../session.ts';
import { ResponseLookup } from './response-lookup.tsx';
import { WebhookEndpoints } from './webhooks.tsx';
import type { Webhook } from './webhook-types.ts';

interface Batch {
  id: string;
  endpoint: string;
  status: string;
  created_at: number;
  request_counts: { total: number; completed: number; failed: number };
}

interface MessageBatch {
  id: string;
  processing_status: string;
  created_at: string;
  request_counts: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
}

const BATCH_COLUMNS: Column<Batch>[] = [
  { header: 'ID', cell: (b) => <code>{b.id}</code> },
  { header: 'Endpoint', cell: (b) => b.endpoint },
  { header: 'Status', cell: (b) => b.status },
  { header: 'Done', cell: (b) => `${b.request_counts.completed + b.request_counts.failed} / ${b.request_counts.total}`, numeric: true },
  { header: 'Failed', cell: (b) => b.request_counts.failed, numeric: true },
  // OpenAI's batch object gives Unix seconds.
  { header: 'Created', cell: (b) => formatTime(new Date(b.created_at * 1000).toISOString()) },
];

const MESSAGE_BATCH_COLUMNS: Column<MessageBatch>[] = [
  { header: 'ID', cell: (b) => <code>{b.id}</code> },
  { header: 'Status', cell: (b) => b.processing_status },
  { header: 'Processing', cell: (b) => b.request_counts.processing, numeric: true },
  { header: 'Succeeded', cell: (b) => b.request_counts.succeeded, numeric: true },
  { header: 'Errored', cell: (b) => b.request_counts.errored, numeric: true },
  { header: 'Created', cell: (b) => formatTime(b.created_at) },
];

interface Lists {
  batches?: Batch[];
  messageBatches?: MessageBatch[];
  webhooks?: Webhook[];
  /** The first list that could not be read; the others are shown. */
  error: unknown;
}

/** Reads, at once, each list this principal may read. */
async function loadLists(session: Session, signal: AbortSignal): Promise<Lists> {
  const list = <T,>(allowed: boolean, path: string, query = {}) =>
    allowed ? api<{ data: T[] }>(path, { query, signal }).then((answer) => answer.data) : Promise.resolve(undefined);
  const settled = await Promise.allSettled([
    list<Batch>(session.can('batches.read'), '/v1/batches', { limit: 20 }),
    list<MessageBatch>(session.can('batches.read'), '/v1/messages/batches', { limit: 20 }),
    list<Webhook>(session.can('webhooks.manage'), '/internal/v1/webhooks'),
  ]);
  const value = <T,>(result: PromiseSettledResult<T>) => (result.status === 'fulfilled' ? result.value : undefined);
  const failed = settled.find((result) => result.status === 'rejected');
  return { batches: value(settled[0]), messageBatches: value(settled[1]), webhooks: value(settled[2]), error: failed?.reason ?? null };
}

/** The Async work page: each part shown with its own permission, one loading state for all. */
export function AsyncWorkPage() {
  const session = useSession();
  const lists = useLoad((signal) => loadLists(session, signal), [session]);
  const data = lists.data;
  return (
    <Page title="Async work">
      <ErrorAlert error={lists.error ?? data?.error} />
      {lists.loading && !data && <Loading />}
      {data?.batches && <Table caption="Batches" columns={BATCH_COLUMNS} rows={data.batches} rowKey={(b) => b.id} empty="No batches." />}
      {data?.messageBatches && (
        <Table caption="Message batches" columns={MESSAGE_BATCH_COLUMNS} rows={data.messageBatches} rowKey={(b) => b.id} empty="No message batches." />
      )}
      {data?.webhooks && <WebhookEndpoints webhooks={data.webhooks} onChanged={lists.reload} />}
      {session.can('responses.create') && <ResponseLookup />}
    </Page>
  );
}
