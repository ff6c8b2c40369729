import { existsSync } from 'node:fs';
/**
 * The system under test, started as production runs it: the bench upstream, `web` and `worker` as
 * separate child processes, a fresh PostgreSQL database with one tenant and `app` key, and a unique
 * Redis prefix. `close()` stops everything and removes what it created, even after a failed start.
 * `web` and `worker` may run from another checkout (e.g. a base revision's worktree): its own store
 * code then migrates the database and creates the tenant, so a schema change between them is no matter.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { deletePrefix, spawnEntry, type GatewayProcess } from '../test/helpers/gateway-processes.ts';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import type { Repository } from '../src/infra/store/repository.ts';
import type { WrittenCatalog } from '../src/domain/catalog/schema.ts';
import { freePort } from '../test/helpers/free-port.ts';

/** The model alias the bench requests from the gateway. */
export const BENCH_MODEL = 'bench-gpt';

/** Tuning of the gateway processes for the bench. */
export interface StackOptions {
  redisUrl: string;
  /** Worker processes (production runs one per core or more; the spec's bench uses one). */
  workers: number;
  /** Jobs the worker runs at once and its upstream pool size; must cover the largest connection count. */
  workerConcurrency: number;
  upstreamConnections: number;
  /** Extra NODE_OPTIONS per process (e.g. `--cpu-prof`). */
  nodeOptions: { web: string; worker: string };
  /** Extra environment of web and worker (e.g. rate-limit defaults). */
  env?: Record<string, string>;
  /** The project whose src/server.ts, workers/main.ts and store code run [this checkout]; the upstream is always this checkout's. */
  root?: string;
  /** Sets up the tenant further (budgets, plan…) through that project's repository, before web and worker start. */
  prepareTenant?: (repository: Repository, tenantId: string) => Promise<void>;
  /** taskset CPU lists: web and workers on `gateway`, the upstream on `upstream` [unpinned]. */
  cpus?: { gateway: string; upstream: string };
  /** More catalog aliases besides BENCH_MODEL, as written in a catalog file (an embeddings model has no output fields), on the bench upstream (whose base URL ends in /v1) [none]. */
  models?: (upstreamUrl: string) => WrittenCatalog['models'];
}

/** A running stack. */
export interface BenchStack {
  /** Base URLs ending in /v1. */
  upstreamUrl: string;
  gatewayUrl: string;
  /** The tenant of `apiKey`. */
  tenantId: string;
  apiKey: string;
  env: Record<string, string>;
  processes: { web: GatewayProcess; workers: GatewayProcess[]; upstream: GatewayProcess };
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const ROOT = fileURLToPath(new URL('../', import.meta.url));

type StoreModule = typeof import('../src/infra/store/postgres/adapter.ts');
type KeyModule = typeof import('../src/domain/access/api-key-secret.ts');

/** The store adapter and key generator of a project, imported from its files (Node strips the types). */
async function importStore(root: string): Promise<{ store: StoreModule; keys: KeyModule }> {
  // A base revision compared against may predate the folders by layer (src/store, src/auth).
  const load = (...paths: string[]) => {
    const found = paths.map((path) => join(root, path)).find((path) => existsSync(path)) ?? join(root, paths[0] as string);
    return import(pathToFileURL(found).href);
  };
  return {
    store: (await load('src/infra/store/postgres/adapter.ts', 'src/store/postgres/adapter.ts')) as StoreModule,
    keys: (await load('src/domain/access/api-key-secret.ts', 'src/auth/api-key-secret.ts')) as KeyModule,
  };
}

async function waitFor<T>(what: string, proc: GatewayProcess, check: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const value = await check().catch(() => null);
    if (value !== null) return value;
    if (proc.child.exitCode !== null) throw new Error(`${what} exited (${proc.child.exitCode}):\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} not ready after ${START_TIMEOUT_MS} ms:\n${proc.output()}`);
}

async function stop(proc: GatewayProcess): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
  await proc.exited;
  clearTimeout(timer);
}

function benchCatalog(upstreamUrl: string, more: WrittenCatalog['models']): WrittenCatalog {
  return {
    models: {
      ...more,
      [BENCH_MODEL]: {
        provider: 'openai-compatible',
        upstream_model: 'bench-upstream-model',
        base_url: upstreamUrl,
        context_window: 8192,
        max_output_tokens: 1024,
        input_price_per_mtok: 1,
        output_price_per_mtok: 2,
      },
    },
    tiers: { 'svc-flash': [BENCH_MODEL], 'svc-standard': [BENCH_MODEL], 'svc-pro': [BENCH_MODEL] },
  };
}

/** A running bench/upstream.ts. */
export interface BenchUpstream {
  /** Base URL ending in /v1. */
  url: string;
  process: GatewayProcess;
  stop(): Promise<void>;
}

/** Starts this checkout's bench/upstream.ts (under `taskset -c <cpus>` when given); resolves once it listens. */
export async function startUpstream(cpus?: string): Promise<BenchUpstream> {
  const upstream = spawnEntry('bench/upstream.ts', {}, ROOT, cpus);
  try {
    const url = await waitFor('upstream', upstream, async () => {
      const line = upstream
        .output()
        .split('\n')
        .find((l) => l.startsWith('{"url"'));
      return line === undefined ? null : (JSON.parse(line) as { url: string }).url;
    });
    return { url, process: upstream, stop: () => stop(upstream) };
  } catch (error) {
    await stop(upstream);
    throw error;
  }
}

/** Starts upstream, database, web and worker; resolves once a completion went through end to end. */
export async function startStack(options: StackOptions): Promise<BenchStack> {
  const cleanups: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error: unknown) => console.error('cleanup:', error));
  };
  try {
    const { url: upstreamUrl, process: upstream, stop: stopUpstream } = await startUpstream(options.cpus?.upstream);
    cleanups.push(stopUpstream);

    const root = options.root ?? ROOT;
    const { store, keys } = await importStore(root);
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const repository = store.createPostgresRepository(database.url);
    cleanups.push(() => repository.close());
    await repository.migrate();
    const tenant = await repository.tenants.create({ id: `bench_${randomBytes(4).toString('hex')}`, name: 'bench' });
    const key = keys.generateApiKey();
    await repository.apiKeys.create({ id: key.id, tenantId: tenant.id, role: 'app', secretHash: key.secretHash });
    await options.prepareTenant?.(repository, tenant.id);

    const dir = await mkdtemp(join(tmpdir(), 'gw-bench-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const catalogPath = join(dir, 'catalog.json');
    await writeFile(catalogPath, JSON.stringify(benchCatalog(upstreamUrl, options.models?.(upstreamUrl) ?? {})));

    const prefix = `bench${randomBytes(4).toString('hex')}`;
    const redis = new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    redis.on('error', () => undefined); // connect() and each command report their own failure
    await redis.connect();
    cleanups.push(async () => {
      await deletePrefix(redis, prefix);
      redis.disconnect();
    });

    const port = await freePort();
    const env: Record<string, string> = {
      REDIS_URL: options.redisUrl,
      REDIS_PREFIX: prefix,
      DATABASE_URL: database.url,
      CATALOG: catalogPath,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WORKER_CONCURRENCY: String(options.workerConcurrency),
      UPSTREAM_CONNECTIONS: String(options.upstreamConnections),
      ...options.env,
    };
    const origin = `http://127.0.0.1:${port}`;
    const web = spawnEntry('src/server.ts', { ...env, NODE_OPTIONS: options.nodeOptions.web }, root, options.cpus?.gateway);
    cleanups.push(() => stop(web));
    const workers = Array.from({ length: options.workers }, () =>
      spawnEntry('workers/main.ts', { ...env, NODE_OPTIONS: options.nodeOptions.worker }, root, options.cpus?.gateway),
    );
    for (const worker of workers) cleanups.push(() => stop(worker));
    await waitFor('web', web, async () => ((await fetch(`${origin}/readyz`)).status === 200 ? true : null));
    // The worker logs "worker ready" only at info level; a completion that comes back proves one consumes jobs.
    await waitFor('worker', workers[0] as GatewayProcess, async () => {
      const response = await fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: BENCH_MODEL, messages: [{ role: 'user', content: 'ping' }] }),
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      return response.status === 200 ? true : null;
    });
    return { upstreamUrl, gatewayUrl: `${origin}/v1`, tenantId: tenant.id, apiKey: key.secret, env, processes: { web, workers, upstream }, close };
  } catch (error) {
    await close();
    throw error;
  }
}
