/**
 * Runs the gateway as production does: `web` and `worker` as separate child processes
 * (node src/server.ts, node workers/main.ts) against real Redis and a fresh PostgreSQL
 * database, with a unique Redis prefix per suite. Tests talk to it over HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { inject } from 'vitest';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { createPostgresRepository } from '../../src/infra/store/postgres/adapter.ts';
import { generateApiKey } from '../../src/domain/access/api-key-secret.ts';
import type { Repository, Role } from '../../src/infra/store/repository.ts';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import { freePort } from './free-port.ts';
import { HEAP_FLAGS } from '../../src/heap-flags.ts';
import { createRedisKeys, type RedisKeys } from '../../src/infra/redis/keys.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
/** Redis of the test machine. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/**
 * Seed nodes of the Redis Cluster a suite runs against: the `cluster` project of vitest.config.ts
 * provides them (test/helpers/cluster-setup.ts); null in the `redis` project. Only callable in a test.
 */
export function testClusterNodes(): string | null {
  return inject('redisClusterNodes') ?? null;
}

/** Queue shards of a gateway on the cluster: more than masters, so that each master holds some. */
const CLUSTER_QUEUE_SHARDS = '4';

/** A client of the Redis the gateways under test use: the test machine's, or the cluster's. */
export function testRedis(clusterNodes: string | null): Redis | Cluster {
  if (!clusterNodes) return new Redis(TEST_REDIS_URL);
  return new Cluster(clusterNodes.split(',').map((node) => ({ host: node.split(':')[0], port: Number(node.split(':')[1]) })));
}

/** A child process of the gateway with its captured output. */
export interface GatewayProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code (or signal) once the process ended. */
  exited: Promise<number | string>;
}

/** A running gateway under test. */
export interface GatewayUnderTest {
  /** Base URL for the openai SDK: http://127.0.0.1:<port>/v1 */
  baseURL: string;
  origin: string;
  env: Record<string, string>;
  prefix: string;
  /** The gateway's Redis key names (its prefix and queue shards). */
  keys: RedisKeys;
  /** The test database the processes use (tests may read and tamper with it directly). */
  databaseUrl: string;
  redis: Redis | Cluster;
  repository: Repository;
  web: GatewayProcess;
  /** Every web process (the first is `web`), with its base URL for the SDK. */
  webs: Array<{ process: GatewayProcess; baseURL: string; origin: string }>;
  workers: GatewayProcess[];
  /** Issues a key for a tenant (created when new) and returns its secret. */
  issueKey(tenantId: string, role: Role): Promise<{ id: string; secret: string }>;
  startWorker(extraEnv?: Record<string, string>): Promise<GatewayProcess>;
  /**
   * Forgets every deployment's circuit breaker and 429 pause, and tells the workers: for suites
   * whose tests script failures or long Retry-Afters that must not carry over to the next test.
   */
  resetBreakers(): Promise<void>;
  close(): Promise<void>;
  /** Kills every process and drops the database, leaving Redis alone: for a test that took its Redis away. */
  abandon(): Promise<void>;
}

/**
 * Spawns `node <entry>` with the heap flags web and worker start with (src/heap-flags.ts) and the given environment, capturing its output; `root` is the project it runs from.
 * With `cpus` (a taskset list, e.g. `0`) it runs under `taskset -c <cpus>`, which execs node: the pid is node's.
 */
export function spawnEntry(entry: string, env: Record<string, string>, root = ROOT, cpus?: string): GatewayProcess {
  let output = '';
  const nodeArgs = [...HEAP_FLAGS, entry];
  const [command, args] = cpus === undefined ? [process.execPath, nodeArgs] : ['taskset', ['-c', cpus, process.execPath, ...nodeArgs]];
  const child = spawn(command, args, { cwd: root, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr?.on('data', (data: Buffer) => (output += data.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, exited };
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string, proc: GatewayProcess, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    if (proc.child.exitCode !== null) throw new Error(`${what}: process exited (${proc.child.exitCode}):\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms:\n${proc.output()}`);
}

/** SIGTERM, then SIGKILL after 10 s; resolves once the process ended. */
export async function stopProcess(proc: GatewayProcess): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10_000);
  await proc.exited;
  clearTimeout(timer);
}

/** The base URL of a process's operations listener, from the port its log names ('worker ready', 'operations listener ready'). */
export function opsUrl(proc: GatewayProcess): string {
  const port = /"opsPort":(\d+)/.exec(proc.output())?.[1];
  if (port === undefined) throw new Error(`the process logged no operations port:\n${proc.output()}`);
  return `http://127.0.0.1:${port}`;
}

/** Every key matching `pattern`, on every master of a cluster. */
export async function scanKeys(redis: Redis | Cluster, pattern: string): Promise<string[]> {
  const found: string[] = [];
  for (const server of redis instanceof Cluster ? redis.nodes('master') : [redis]) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

/** Deletes every key of a test prefix (queue keys and per-request streams); one key at a time, since a cluster refuses a DEL across slots. */
export async function deletePrefix(redis: Redis | Cluster, prefix: string): Promise<void> {
  for (const pattern of [`{${prefix}:*`, `${prefix}:*`]) {
    const keys = await scanKeys(redis, pattern);
    await Promise.all(keys.map((key) => redis.del(key)));
  }
}

/** Starts web + `workers` worker processes with the catalog and extra environment given. */
export async function startGateway(options: {
  catalog: WrittenCatalog;
  env?: Record<string, string>;
  workers?: number;
  webs?: number;
  clusterNodes?: string;
  /** The store's URL as the processes are given it (a proxy's, for a test that cuts it); the test's own repository uses the database directly. */
  storeUrl?: (databaseUrl: string) => string;
}): Promise<GatewayUnderTest> {
  const clusterNodes = options.clusterNodes ?? testClusterNodes();
  const database: TestDatabase = await createTestDatabase();
  const dir = await mkdtemp(join(tmpdir(), 'gw-test-'));
  const catalogPath = join(dir, 'catalog.json');
  await writeFile(catalogPath, JSON.stringify(options.catalog));
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const redisEnv: Record<string, string> = clusterNodes
    ? { REDIS_CLUSTER_NODES: clusterNodes, QUEUE_SHARDS: CLUSTER_QUEUE_SHARDS }
    : { REDIS_URL: TEST_REDIS_URL };
  const keys = createRedisKeys(prefix, Number(options.env?.QUEUE_SHARDS ?? redisEnv.QUEUE_SHARDS ?? 1));
  const port = await freePort();
  const env: Record<string, string> = {
    ...redisEnv,
    REDIS_PREFIX: prefix,
    DATABASE_URL: options.storeUrl ? options.storeUrl(database.url) : database.url,
    CATALOG: catalogPath,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    // Each worker's operations listener (/healthz, /readyz) on a free port it logs (opsUrl).
    METRICS_PORT: '0',
    ...options.env,
  };
  const repository = createPostgresRepository(database.url);
  await repository.migrate();
  const redis = testRedis(clusterNodes);
  const origin = `http://127.0.0.1:${port}`;
  const webs: GatewayUnderTest['webs'] = [];
  for (let i = 0; i < (options.webs ?? 1); i++) {
    const webPort = i === 0 ? port : await freePort();
    const webOrigin = `http://127.0.0.1:${webPort}`;
    const proc = spawnEntry('src/server.ts', { ...env, PORT: String(webPort) });
    await waitFor(async () => (await fetch(`${webOrigin}/readyz`).catch(() => null))?.status === 200, 'web', proc);
    webs.push({ process: proc, baseURL: `${webOrigin}/v1`, origin: webOrigin });
  }
  const web = (webs[0] as GatewayUnderTest['webs'][number]).process;
  const workers: GatewayProcess[] = [];

  const startWorker = async (extraEnv: Record<string, string> = {}) => {
    const worker = spawnEntry('workers/main.ts', { ...env, ...extraEnv });
    await waitFor(() => worker.output().includes('worker ready'), 'worker', worker);
    workers.push(worker);
    return worker;
  };
  for (let i = 0; i < (options.workers ?? 1); i++) await startWorker();

  return {
    baseURL: `${origin}/v1`,
    origin,
    env,
    prefix,
    keys,
    databaseUrl: database.url,
    redis,
    repository,
    web,
    webs,
    workers,
    startWorker,
    async resetBreakers() {
      const found = await scanKeys(redis, keys.breaker('*'));
      await Promise.all(found.map((key) => redis.del(key)));
      await Promise.all(found.map((key) => redis.publish(keys.breakerChanges, key.slice(keys.breaker('').length))));
      // The workers read the state again as the announcements arrive.
      await new Promise((resolve) => setTimeout(resolve, 100));
    },
    async issueKey(tenantId, role) {
      if (!(await repository.tenants.get(tenantId))) await repository.tenants.create({ id: tenantId, name: tenantId });
      const key = generateApiKey();
      await repository.apiKeys.create({ id: key.id, tenantId, role, secretHash: key.secretHash });
      return { id: key.id, secret: key.secret };
    },
    async close() {
      await Promise.all([...webs.map((w) => w.process), ...workers].map(stopProcess));
      await repository.close();
      await deletePrefix(redis, prefix);
      redis.disconnect();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    },
    async abandon() {
      for (const proc of [...webs.map((w) => w.process), ...workers]) proc.child.kill('SIGKILL');
      await Promise.all([...webs.map((w) => w.process), ...workers].map((proc) => proc.exited));
      redis.disconnect();
      await repository.close();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
