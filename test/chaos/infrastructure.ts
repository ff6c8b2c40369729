/**
 * What a campaign runs on, started and stopped together: its Redis (one, or a cluster), a fresh
 * PostgreSQL database behind a proxy the campaign can cut, two fake upstreams, the catalog, the
 * gateway's environment and its processes. Everything listens on loopback; `stop()` ends it all.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { createPostgresRepository } from '../../src/infra/store/postgres/adapter.ts';
import type { Repository } from '../../src/infra/store/repository.ts';
import { createRedisKeys, type RedisKeys } from '../../src/infra/redis/keys.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';
import { startChaosCluster, type ChaosCluster } from './redis-cluster.ts';
import { startChaosUpstream, type ChaosUpstream } from './upstream.ts';
import { GatewayProcesses } from './processes.ts';

/** The gateway's short settings for a campaign (src/config.ts): faults must resolve in seconds, not minutes. */
export const SETTINGS = {
  SHUTDOWN_GRACE_MS: 3_000,
  WORKER_LOCK_MS: 4_000,
  QUEUE_DEADLINE_MS: 10_000,
  RETRY_BUDGET_MS: 5_000,
  RETRY_BASE_MS: 200,
  RETRY_MAX_DELAY_MS: 1_000,
  UPSTREAM_CONNECT_TIMEOUT_MS: 2_000,
  REQUEST_TIMEOUT_MS: 20_000,
  BACKGROUND_QUEUE_DEADLINE_MS: 30_000,
  RESPONSES_REAP_INTERVAL_MS: 2_000,
} as const;

/** A process's deadline after SIGTERM: its grace and the 5 s margin (src/boot.ts). */
export const STOP_DEADLINE_MS = SETTINGS.SHUTDOWN_GRACE_MS + 5_000;
/** Redis key prefix of the campaign's gateway. */
const PREFIX = 'chaos';
const CLUSTER_SHARDS = 4;

/** A started campaign's infrastructure. */
export interface Infrastructure {
  redis: PrivateRedis | null;
  cluster: ChaosCluster | null;
  /** The campaign's own Redis client (checks). */
  client: Redis | Cluster;
  keys: RedisKeys;
  database: TestDatabase;
  /** The store, connected directly (setup). */
  repository: Repository;
  postgres: TcpProxy;
  upstreams: { primary: ChaosUpstream; backup: ChaosUpstream };
  processes: GatewayProcesses;
  stop(): Promise<void>;
}

/** Starts everything but the gateway's processes' traffic; `log` prints progress. */
export async function startInfrastructure(
  options: { cluster: boolean; webs: number },
  clock: () => number,
  log: (line: string) => void,
): Promise<Infrastructure> {
  const undo: Array<() => unknown> = [];
  const stop = async () => {
    for (const step of undo.reverse()) await Promise.resolve(step()).catch(() => undefined);
  };
  try {
    const dir = await mkdtemp(join(tmpdir(), 'chaos-'));
    undo.push(() => rm(dir, { recursive: true, force: true }));
    const redis = options.cluster ? null : await startPrivateRedis();
    if (redis) undo.push(() => redis.stop());
    const cluster = options.cluster ? await startChaosCluster() : null;
    if (cluster) undo.push(() => cluster.stop());
    log(redis ? `redis-server on port ${redis.port} (append-only)` : `Redis Cluster of 3 masters and 3 replicas: ${cluster?.nodes}`);
    const database = await createTestDatabase();
    undo.push(() => database.drop());
    const postgres = await startTcpProxy(Number(new URL(database.url).port || 5432));
    undo.push(() => postgres.close());
    const proxied = new URL(database.url);
    proxied.port = String(postgres.port);
    log(`database ${database.name}, reached by the gateway through the proxy on port ${postgres.port}`);
    const upstreams = { primary: await startChaosUpstream('primary'), backup: await startChaosUpstream('backup') };
    undo.push(
      () => upstreams.primary.close(),
      () => upstreams.backup.close(),
    );
    const catalog = join(dir, 'catalog.json');
    await writeFile(catalog, JSON.stringify(testCatalog(upstreams.primary.url, upstreams.backup.url)));
    const repository = createPostgresRepository(database.url);
    undo.push(() => repository.close());
    await repository.migrate();
    const shards = options.cluster ? CLUSTER_SHARDS : 1;
    const env: Record<string, string> = {
      ...(redis ? { REDIS_URL: redis.url } : { REDIS_CLUSTER_NODES: cluster?.nodes ?? '', QUEUE_SHARDS: String(shards) }),
      REDIS_PREFIX: PREFIX,
      DATABASE_URL: proxied.toString(),
      CATALOG: catalog,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
      ...Object.fromEntries(Object.entries(SETTINGS).map(([name, value]) => [name, String(value)])),
    };
    const client = redis
      ? new Redis(redis.url, { maxRetriesPerRequest: 3 })
      : new Cluster((cluster?.nodes ?? '').split(',').map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })));
    client.on('error', () => undefined);
    undo.push(() => client.disconnect());
    const processes = new GatewayProcesses(env, clock, log);
    undo.push(() => processes.killAll());
    await processes.start(options.webs, 2);
    log(`${options.webs} web (${processes.webOrigins.join(', ')}) and 2 worker processes ready`);
    return { redis, cluster, client, keys: createRedisKeys(PREFIX, shards), database, repository, postgres, upstreams, processes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
