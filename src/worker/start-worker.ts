import { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { loadCatalogFile } from '../domain/catalog/load-catalog.ts';
import { buildTargets, missingSecrets } from '../domain/catalog/targets.ts';
import { createRedisKeys, REQUEST_QUEUE } from '../infra/redis/keys.ts';
import { assertNoEviction, boundedWait, closeRedis, connectRedis } from '../infra/redis/connections.ts';
import { defineScripts } from '../infra/redis/scripts.ts';
import { createProviderRegistry } from '../providers/registry.ts';
import { traceProviders } from '../infra/tracing/traced-providers.ts';
import { TRACING_OFF, type Tracing } from '../infra/tracing/tracing.ts';
import type { JobBatch } from '../infra/queue/job.ts';
import { byKind, OPERATIONS, type RequestJob } from '../operations/index.ts';
import type { Operations } from '../operations/operation.ts';
import { Cancellations } from '../infra/events/cancellations.ts';
import { createJobProcessor, createLostJobHandler, type ProcessorDeps } from './job-processor.ts';
import { startResponseReaper } from './response-reaper.ts';
import { ResponseStates } from '../infra/responses/response-state.ts';

import { listenForCancellations } from '../infra/events/cancel-listener.ts';
import { Outbox } from '../infra/outbox/outbox.ts';
import { OutboxDrainer } from '../infra/outbox/drainer.ts';
import { createStore } from '../infra/store/create-store.ts';
import { BudgetLedger } from '../domain/budget/budget-ledger.ts';
import { storeSpendSource } from '../domain/budget/store-spend-source.ts';
import { startOpsListener } from '../infra/health/ops-listener.ts';
import { startHeartbeat } from '../infra/health/worker-presence.ts';
import { pinged, type Dependency } from '../infra/health/readiness.ts';
import { createMetricsRegistry } from '../infra/metrics/registry.ts';
import { WorkerMetrics } from '../infra/metrics/worker-metrics.ts';
import { registerBacklogGauges } from '../infra/metrics/backlog-gauges.ts';
import { createWebhookAgent } from '../infra/webhooks/guarded-agent.ts';
import { parseRetryDelays, WebhookQueue } from '../infra/webhooks/webhook-queue.ts';
import { sendWebhook } from '../infra/webhooks/webhook-sender.ts';
import { createWebhookProcessor, createWebhookWorkers } from '../infra/webhooks/webhook-worker.ts';

// A stored response is read from Redis until the outbox has written it to the store, then from the store.
const STORED_RESPONSE_REDIS_TTL_MS = 60_000;

/** A running worker: its BullMQ workers (one per queue shard) and a graceful stop. */
export interface RunningWorker {
  workers: ReadonlyArray<Worker<JobBatch<RequestJob>>>;
  /** Finishes running jobs for up to the grace period, then hands the rest back (they stall and are re-run). */
  close(): Promise<void>;
}

/** The worker's composition root: connections, catalog, providers, the BullMQ worker and the outbox drainer, built once; it runs `operations`' jobs. */
export async function startWorker(config: Config, log: Logger, tracing: Tracing = TRACING_OFF, operations: Operations = OPERATIONS): Promise<RunningWorker> {
  const { env } = config;
  const catalog = await loadCatalogFile(env.CATALOG);
  const missing = missingSecrets(catalog, config.readSecret);
  if (missing.length > 0) log.warn({ models: missing }, 'provider keys are not set; these models will fail');
  const keys = createRedisKeys(env.REDIS_PREFIX, env.QUEUE_SHARDS);
  const onRedisError = (error: Error) => log.warn({ err: error }, 'redis connection error');
  const redis = defineScripts(await connectRedis(config.redis, 'commands', 'gw-worker-commands', onRedisError));
  await assertNoEviction(redis);
  const subscriber = await connectRedis(config.redis, 'subscriber', 'gw-worker-cancel', onRedisError);
  const blocking = await connectRedis(config.redis, 'blocking', 'gw-worker-queue', onRedisError);
  const providers = traceProviders(
    createProviderRegistry({
      connectTimeoutMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
      headersTimeoutMs: env.UPSTREAM_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: env.UPSTREAM_BODY_TIMEOUT_MS,
      connections: env.UPSTREAM_CONNECTIONS,
    }),
    tracing,
  );
  const repository = await createStore(config.store);
  // A request cancelled while its job waits is remembered until the web tier would have given the job up.
  const cancellations = new Cancellations(2 * env.QUEUE_DEADLINE_MS);
  // Series are kept only where something can read them; the queue handles only count jobs, on the commands connection.
  const registry = env.METRICS_PORT === undefined ? null : createMetricsRegistry();
  const counted = registry
    ? Array.from({ length: keys.queueShards }, (_, shard) => new Queue(REQUEST_QUEUE, { connection: redis, prefix: keys.queuePrefix(shard) }))
    : [];
  if (registry) registerBacklogGauges(registry, { queues: counted, redis, keys, store: repository });
  const outbox = new Outbox(redis, keys);
  const states = new ResponseStates(redis, keys);
  const processorDeps: ProcessorDeps = {
    redis,
    keys,
    targets: buildTargets(catalog, config.readSecret),
    models: catalog.models,
    providers,
    operations: byKind(operations),
    policy: { maxAttempts: env.RETRY_MAX_ATTEMPTS, budgetMs: env.RETRY_BUDGET_MS, baseMs: env.RETRY_BASE_MS, maxDelayMs: env.RETRY_MAX_DELAY_MS },
    // A stream's lifetime is set once, at its first event: it must cover the longest request.
    eventsTtlMs: Math.max(env.EVENTS_TTL_MS, env.REQUEST_TIMEOUT_MS),
    // A stalled job is re-run within about two lock periods; it must still find its finished events.
    finishedEventsTtlMs: Math.max(60_000, 3 * env.WORKER_LOCK_MS),
    outbox,
    ledger: new BudgetLedger({ redis, keys, spend: storeSpendSource(repository), reservationTtlMs: env.REQUEST_TIMEOUT_MS + 60_000 }),
    states,
    keptTtlMs: { background: env.BACKGROUND_RESULT_TTL_S * 1000, stored: STORED_RESPONSE_REDIS_TTL_MS },
    cancellations,
    metrics: registry && new WorkerMetrics(registry, { tenants: env.METRICS_TENANTS }),
    tracing,
    log,
  };
  const processor = createJobProcessor(processorDeps);
  const endLost = createLostJobHandler(processorDeps);
  // Every process consumes every shard, each with the whole concurrency: a tenant lives on one
  // shard, so splitting it would cap one busy tenant at a fraction of the process.
  const workers = Array.from({ length: keys.queueShards }, (_, shard) => {
    const worker = new Worker<JobBatch<RequestJob>>(REQUEST_QUEUE, processor, {
      connection: blocking,
      prefix: keys.queuePrefix(shard),
      concurrency: env.WORKER_CONCURRENCY,
      lockDuration: env.WORKER_LOCK_MS,
      stalledInterval: Math.max(1000, Math.floor(env.WORKER_LOCK_MS / 2)),
      maxStalledCount: 1,
    });
    worker.on('error', (error) => log.error({ err: error, shard }, 'worker error'));
    worker.on('failed', (job) => {
      endLost(job).catch((error: unknown) => log.error({ err: error, jobId: job?.id }, 'ending the background responses of a failed job failed'));
    });
    return worker;
  });
  const stopListening = await listenForCancellations(subscriber, keys.cancelChannel, cancellations);
  // Webhook deliveries have their own queue and workers: a slow endpoint never holds up model work.
  const retryDelaysMs = parseRetryDelays(env.WEBHOOK_RETRY_DELAYS_MS);
  const webhookQueue = new WebhookQueue({ connection: redis, keys, repository, retryDelaysMs, onError: onRedisError });
  const webhookAgent = createWebhookAgent({
    allowPrivate: env.WEBHOOK_ALLOW_PRIVATE_URLS,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    connections: env.WEBHOOK_CONCURRENCY,
  });
  const webhookWorkers = createWebhookWorkers(
    createWebhookProcessor({
      repository,
      send: (endpoint, event, signal) => sendWebhook({ agent: webhookAgent, timeoutMs: env.WEBHOOK_TIMEOUT_MS }, endpoint, event, signal),
      audit: (event) => outbox.push(event.tenantId, { kind: 'audit', event }),
      log,
    }),
    { connection: blocking, keys, concurrency: env.WEBHOOK_CONCURRENCY, retryDelaysMs, log },
  );
  const stopReaper = startResponseReaper({
    responses: repository.responses,
    states,
    outbox,
    intervalMs: env.RESPONSES_REAP_INTERVAL_MS,
    pollableMs: env.BACKGROUND_RESULT_TTL_S * 1000,
    log,
  });
  const drainer = new OutboxDrainer(redis, keys, repository, log, {}, { webhooks: (entries) => webhookQueue.enqueue(entries) });
  drainer.start();
  await Promise.all([...workers, ...webhookWorkers].map((worker) => worker.waitUntilReady()));
  let stopping = false;
  const stopHeartbeat = startHeartbeat(
    redis,
    keys.workerHeartbeat,
    env.READY_WORKER_WINDOW_MS,
    () => !stopping && blocking.status === 'ready' && workers.every((worker) => worker.isRunning()),
    onRedisError,
  );
  const dependencies: Dependency[] = [pinged('redis', () => redis.ping()), pinged('store', () => repository.ping())];
  const ops =
    env.METRICS_PORT === undefined
      ? null
      : await startOpsListener(env.METRICS_HOST, env.METRICS_PORT, { dependencies, stopping: () => stopping, metrics: registry });
  log.info({ concurrency: env.WORKER_CONCURRENCY, queue: REQUEST_QUEUE, shards: keys.queueShards, opsPort: ops?.port ?? null }, 'worker ready');

  return {
    workers,
    async close() {
      stopping = true;
      stopHeartbeat();
      const finished = await boundedWait(Promise.all([...workers, ...webhookWorkers].map((worker) => worker.close())), env.SHUTDOWN_GRACE_MS);
      if (!finished) {
        // BullMQ ignores close(true) once close() has begun, and close() waits on its blocking
        // command, which a Redis Cluster with no master left retries for ever. Dropping the
        // connections ends it; the running jobs' locks lapse and another worker re-runs them.
        log.warn('grace period over; handing running jobs back to the queue');
        await boundedWait(Promise.all([...workers, ...webhookWorkers].map((worker) => worker.disconnect())));
      }
      // Each step is bounded: whatever Redis, the store or an upstream do, the process ends.
      await boundedWait(stopListening());
      await boundedWait(stopReaper());
      await boundedWait(drainer.stop());
      await boundedWait(webhookQueue.close());
      await boundedWait(webhookAgent.close());
      await boundedWait(ops?.close());
      await boundedWait(Promise.all(counted.map((queue) => queue.close())));
      await boundedWait(repository.close());
      await boundedWait(providers.close());
      await closeRedis([redis, subscriber, blocking]);
    },
  };
}
