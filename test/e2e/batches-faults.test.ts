/**
 * A batch survives what its processes go through: workers killed (SIGKILL) several times while its
 * lines run, the web process killed and started again, the workers' store cut for 10 s. Every
 * custom_id ends once in the output or error file, and the usage records (one per line that ran,
 * charged) match the output exactly. Web and worker processes, the openai SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import pg from 'pg';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { spawnEntry, startGateway, type GatewayProcess, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { eventually } from '../helpers/http.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

const LINES = 240;

let upstream: FakeUpstream;
let proxy: TcpProxy;
let gateway: GatewayUnderTest;
let client: OpenAI;
let workerEnv: Record<string, string>;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startTcpProxy(5432);
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    workers: 0,
    env: {
      WORKER_CONCURRENCY: '8',
      BATCH_TENANT_SHARE: '0.5',
      BATCH_SEGMENT_LINES: '16',
      BATCH_SUPERVISE_INTERVAL_MS: '200',
      // A killed worker's segments are taken over within about a second.
      WORKER_LOCK_MS: '1500',
    },
  });
  // The workers reach the store through the proxy the test cuts; the web tier does not.
  workerEnv = { DATABASE_URL: gateway.databaseUrl.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`) };
  await Promise.all([gateway.startWorker(workerEnv), gateway.startWorker(workerEnv)]);
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 2 });
});

afterAll(async () => {
  await gateway?.close();
  await proxy?.close();
  await upstream?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function completed(id: string): Promise<number> {
  return (await client.batches.retrieve(id)).request_counts?.completed ?? 0;
}

/** Kills a worker outright and starts another in its place. */
async function killWorker(): Promise<void> {
  const victim = gateway.workers.shift() as GatewayProcess;
  victim.child.kill('SIGKILL');
  await victim.exited;
  await gateway.startWorker(workerEnv);
}

async function restartWeb(): Promise<void> {
  const slot = gateway.webs[0] as GatewayUnderTest['webs'][number];
  slot.process.child.kill('SIGKILL');
  await slot.process.exited;
  const next = spawnEntry('src/server.ts', gateway.env);
  slot.process = next;
  await eventually(async () => (await fetch(`${gateway.origin}/readyz`).catch(() => null))?.status === 200, 20_000, 'the new web process');
}

async function query<T extends pg.QueryResultRow>(sql: string, values: unknown[]): Promise<T[]> {
  const db = new pg.Client({ connectionString: gateway.databaseUrl });
  await db.connect();
  try {
    return (await db.query<T>(sql, values)).rows;
  } finally {
    await db.end();
  }
}

describe('a batch through worker kills, a web restart and a store outage', () => {
  it('ends with every custom_id once, and usage records equal to its output', async () => {
    const ids = Array.from({ length: LINES }, (_, i) => `row-${i}`);
    const text = ids
      .map((id) =>
        JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-slow', messages: [{ role: 'user', content: id }] } }),
      )
      .join('\n');
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'rows.jsonl'), purpose: 'batch' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    await eventually(async () => (await completed(batch.id)) >= 20, 20_000, 'lines to run');
    await killWorker();
    await eventually(async () => (await completed(batch.id)) >= 60, 30_000, 'lines to run after the first kill');
    await restartWeb();
    await proxy.cut();
    await sleep(10_000);
    await proxy.restore();
    await killWorker();
    await eventually(async () => (await completed(batch.id)) >= 120, 40_000, 'lines to run after the outage');
    await killWorker();

    let done = await client.batches.retrieve(batch.id);
    await eventually(
      async () => {
        done = await client.batches.retrieve(batch.id);
        return done.status === 'completed';
      },
      90_000,
      'the batch to complete',
    );
    const lines = async (fileId: string | null | undefined) =>
      fileId
        ? (await (await client.files.content(fileId)).text())
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as { custom_id: string })
        : [];
    const output = await lines(done.output_file_id);
    const errors = await lines(done.error_file_id);
    const all = [...output, ...errors].map((line) => line.custom_id);
    expect(all.sort()).toEqual([...ids].sort());
    expect(new Set(all).size).toBe(LINES);
    expect(done.request_counts).toMatchObject({ total: LINES, completed: output.length, failed: errors.length });

    const records = await query<{ custom_id: string; cost_micros: string }>('SELECT custom_id, cost_micros FROM usage_records WHERE batch_id = $1', [batch.id]);
    const charged = records.filter((record) => Number(record.cost_micros) > 0).map((record) => record.custom_id);
    expect(charged.sort()).toEqual(output.map((line) => line.custom_id).sort());
    expect(records.length).toBe(new Set(records.map((record) => record.custom_id)).size);
  }, 240_000);
});

describe('a batch cancelled before any worker read it', () => {
  let idle: GatewayUnderTest;

  afterAll(async () => {
    await idle?.close();
  });

  it('ends cancelled with every line in the error file once a worker comes', async () => {
    idle = await startGateway({ catalog: testCatalog(upstream.url), workers: 0, env: { BATCH_SUPERVISE_INTERVAL_MS: '200' } });
    const api = new OpenAI({ baseURL: idle.baseURL, apiKey: (await idle.issueKey('acme', 'app')).secret, maxRetries: 0 });
    const ids = ['c1', 'c2', 'c3'];
    const text = ids
      .map((id) =>
        JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim', messages: [{ role: 'user', content: id }] } }),
      )
      .join('\n');
    const file = await api.files.create({ file: await toFile(Buffer.from(text), 'c.jsonl'), purpose: 'batch' });
    const batch = await api.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect((await api.batches.cancel(batch.id)).status).toBe('cancelling');
    await idle.startWorker();
    let done = batch;
    await eventually(async () => (done = await api.batches.retrieve(batch.id)).status === 'cancelled', 15_000, 'the batch to be cancelled');
    expect(done.output_file_id).toBeNull();
    const errors = (await (await api.files.content(done.error_file_id as string)).text())
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { custom_id: string; error: { code: string } });
    expect(errors.map((line) => line.custom_id)).toEqual(ids);
    expect(errors.every((line) => line.error.code === 'batch_cancelled')).toBe(true);
    expect(done.request_counts).toMatchObject({ total: 3, completed: 0, failed: 3 });
  });
});
