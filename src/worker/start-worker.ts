import { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { loadCatalogFile } from '../domain/catalog/load-catalog.ts';
import { buildPools, connectTimeoutsOf, missingSecrets } from '../domain/catalog/targets.ts';
import { descriptorOf } from '../providers/descriptors.ts';
import { CircuitBreakers } from './routing/circuit-breakers.ts';
import { DeploymentRouter } from './routing/deployment-router.ts';
import { DeploymentQuotas } from './routing/deployment-quotas.ts';
import { DeploymentLoads } from './routing/deployment-loads.ts';
import { BreakerMetrics } from '../infra/metrics/breaker-metrics.ts';
import { circuitsReport } from './routing/circuits-report.ts';
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
import { createJobProcessor, createLostJobHandler, createRequestRunner, type ProcessorDeps } from './job-processor.ts';
import { lineEnds } from './batches/line-ends.ts';
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
import { BatchQueues } from '../infra/queue/batch-jobs.ts';
import { BatchLane } from './batches/batch-lane.ts';
import { createBatchProcessor, createBatchWorkers, interactiveWaiting } from './batches/batch-worker.ts';
import { bodyChecks } from '../operations/batch-body-check.ts';
import { startBatchSupervisor } from './batches/batch-supervisor.ts';
import { startFileSweep } from './file-sweep.ts';
import { PromptCache } from '../domain/prompts/prompt-cache.ts';
import { TenantSettingsCache } from '../domain/tenants/tenant-settings.ts';
import { KeyLimitsCache } from '../domain/access/key-limits-cache.ts';
import { KeptResponses } from '../infra/responses/kept-responses.ts';
import { admissionDefaultsOf, createAdmission } from '../domain/admission/admission-ports.ts';

// A stored response is read from Redis until the outbox has written it to the store, then from the store.
const STORED_RESPONSE_REDIS_TTL_MS = 60_000;

// As on the web tier: a prompt version activated elsewhere reaches batch lines within this.
const PROMPT_CACHE_TTL_MS = 5_000;

// How often a batch line held back by the live queue looks at it again.
const LANE_POLL_MS = 50;

// Successful calls reach the deployments' breakers this often (failures at once), the tokens of
// finished calls their quotas, and the loads of least-busy and latency aliases the other workers:
// one Redis call per deployment (or such alias) in use per period, whatever the traffic.
const BREAKER_FLUSH_MS = 250;

// Segments one worker process holds at once, of every batch; the lane's slots bound the lines they run.
const SEGMENTS_PER_WORKER = 32;

// Validations and finalizers one worker process runs at once.
const STEPS_PER_WORKER = 4;

/** A running worker: its BullMQ workers (one per queue shard) and a graceful stop. */
export interface RunningWorker {
  workers: ReadonlyArray<Worker<JobBatch<RequestJob>>>;
  /** Finishes running jobs for up to the grace period, then hands the rest back (they stall and are re-run). */
  close(): Promise<void>;
}

/** The worker's composition root: connections, catalog, providers, the BullMQ worker and the outbox drainer, built once; it runs `operations`' jobs. */
export async function startWorker(config: Config, log: Logger, tracing: Tracing = TRACING_OFF, operations: Operations = OPERATIONS): Promise<RunningWorker> {
  const { env } = config;
  let stopping = false;
  const catalog = await loadCatalogFile(env.CATALOG);
  const missing = missingSecrets(catalog, config.readSecret);
  if (missing.length > 0) log.warn({ models: missing }, 'provider keys are not set; these models will fail');
  const keys = createRedisKeys(env.REDIS_PREFIX, env.QUEUE_SHARDS);
  const onRedisError = (error: Error) => log.warn({ err: error }, 'redis connection error');
  const redis = defineScripts(await connectRedis(config.redis, 'commands', 'gw-worker-commands', onRedisError));
  await assertNoEviction(redis);
  const subscriber = await connectRedis(config.redis, 'subscriber', 'gw-worker-cancel', onRedisError);
  const blocking = await connectRedis(config.redis, 'blocking', 'gw-worker-queue', onRedisError);
  const queueConnection = await connectRedis(config.redis, 'queues', 'gw-worker-queues', onRedisError);
  const pools = buildPools(catalog, config.readSecret);
  const providers = traceProviders(
    createProviderRegistry({
      connectTimeoutMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
      connectTimeouts: connectTimeoutsOf(pools, (provider) => descriptorOf(provider).telemetry.defaultBaseUrl),
      headersTimeoutMs: env.UPSTREAM_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: env.UPSTREAM_BODY_TIMEOUT_MS,
      connections: env.UPSTREAM_CONNECTIONS,
    }),
    tracing,
  );
  const repository = await createStore(config.store);
  // A request cancelled while its job waits is remembered until the web tier would have given the job up.
  const cancellations = new Cancellations(2 * env.QUEUE_DEADLINE_MS);
  // Series are kept only where something can read them; the queue handles only count jobs.
  const registry = env.METRICS_PORT === undefined ? null : createMetricsRegistry();
  const counted = registry
    ? Array.from({ length: keys.queueShards }, (_, shard) => new Queue(REQUEST_QUEUE, { connection: queueConnection, prefix: keys.queuePrefix(shard) }))
    : [];
  if (registry) registerBacklogGauges(registry, { queues: counted, redis, keys, store: repository });
  const outbox = new Outbox(redis, keys);
  const states = new ResponseStates(redis, keys);
  // A probe that never reports (its worker died) is given up once its request would have.
  const breakers = new CircuitBreakers({ redis, keys, pools, probeLeaseMs: env.RETRY_BUDGET_MS, metrics: registry && new BreakerMetrics(registry), log });
  const stopBreakers = await breakers.start(subscriber, BREAKER_FLUSH_MS);
  const quotas = new DeploymentQuotas({ redis, keys, pools, log });
  const stopQuotas = quotas.start(BREAKER_FLUSH_MS);
  const loads = new DeploymentLoads({ redis, keys, pools, log });
  const stopLoads = loads.start(BREAKER_FLUSH_MS);
  const processorDeps: ProcessorDeps = {
    redis,
    keys,
    pools,
    router: new DeploymentRouter({ breakers, quotas, loads }),
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
  const lane = new BatchLane(
    {
      slots: Math.max(1, Math.floor(env.WORKER_CONCURRENCY * env.BATCH_LANE_SHARE)),
      tenantSlots: Math.max(1, Math.floor(env.WORKER_CONCURRENCY * env.BATCH_TENANT_SHARE)),
      pollMs: LANE_POLL_MS,
    },
    interactiveWaiting(redis, keys),
  );
  processorDeps.onBatchRateLimited = (alias, retryAfterMs) => lane.slowDown(alias, retryAfterMs);
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
  // Batches run in the capacity live requests leave: their own queue, their own lane of slots.
  const batchQueues = new BatchQueues(queueConnection, keys, onRedisError);
  const byKindOperations = byKind(operations);
  const runRequest = createRequestRunner(processorDeps);
  const ends = lineEnds(redis, keys);
  // The worker hears no invalidations: a key's changed limits reach its batch lines within the settings' TTL, as a changed plan does.
  const keyLimits = new KeyLimitsCache(repository.apiKeys, env.SETTINGS_CACHE_TTL_MS);
  const batchProcessor = createBatchProcessor({
    segment: {
      batches: repository.batches,
      files: repository.files,
      lane,
      admission: {
        plan: {
          catalog: catalog,
          prompts: new PromptCache(repository.prompts, PROMPT_CACHE_TTL_MS),
          responses: new KeptResponses(states, repository.responses),
        },
        settings: new TenantSettingsCache(repository, env.PII_DEFAULT_MODE, env.SETTINGS_CACHE_TTL_MS),
        keyLimits: (tenantId, keyId) => keyLimits.get(tenantId, keyId),
        admission: createAdmission(redis, keys, processorDeps.ledger, log, (tenantId, digest, since) => repository.usage.answeredBy(tenantId, digest, since)),
        audit: (event) => outbox.push(event.tenantId, { kind: 'audit', event }),
        defaults: admissionDefaultsOf(env),
      },
      operations: byKindOperations,
      run: runRequest,
      ends,
      outbox,
      shardOf: (tenantId) => keys.shardOf(tenantId),
      statusPollMs: Math.min(1_000, env.BATCH_SUPERVISE_INTERVAL_MS),
      closing: () => stopping,
      log,
    },
    validate: {
      batches: repository.batches,
      files: repository.files,
      queues: batchQueues,
      outbox,
      checkBody: bodyChecks(byKindOperations, catalog),
      maxLines: env.BATCH_MAX_LINES,
      segmentLines: env.BATCH_SEGMENT_LINES,
      maxLineBytes: env.BODY_LIMIT_BYTES,
    },
    finalize: { batches: repository.batches, files: repository.files, ends, outbox, fileTtlMs: env.FILE_TTL_S * 1000 },
  });
  const batchWorkers = createBatchWorkers(batchProcessor, {
    connection: blocking,
    keys,
    segments: SEGMENTS_PER_WORKER,
    steps: STEPS_PER_WORKER,
    lockMs: env.WORKER_LOCK_MS,
    log,
  });
  const stopSupervisor = startBatchSupervisor({
    batches: repository.batches,
    queues: batchQueues,
    intervalMs: env.BATCH_SUPERVISE_INTERVAL_MS,
    stallMs: Math.max(30_000, 10 * env.BATCH_SUPERVISE_INTERVAL_MS),
    log,
  });
  const stopFileSweep = startFileSweep({ files: repository.files, intervalMs: env.FILES_SWEEP_INTERVAL_MS, log });
  // Webhook deliveries have their own queue and workers: a slow endpoint never holds up model work.
  const retryDelaysMs = parseRetryDelays(env.WEBHOOK_RETRY_DELAYS_MS);
  const webhookQueue = new WebhookQueue({ connection: queueConnection, keys, repository, retryDelaysMs, onError: onRedisError });
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
  await Promise.all([...workers, ...webhookWorkers, ...batchWorkers].map((worker) => worker.waitUntilReady()));
  const stopHeartbeat = startHeartbeat(
    redis,
    keys.workerHeartbeat,
    env.READY_WORKER_WINDOW_MS,
    () => !stopping && blocking.status === 'ready' && workers.every((worker) => worker.isRunning()),
    onRedisError,
  );
  const dependencies: Dependency[] = [pinged('redis', () => redis.ping()), pinged('store', () => repository.ping()), circuitsReport(breakers)];
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
      const finished = await boundedWait(Promise.all([...workers, ...webhookWorkers, ...batchWorkers].map((worker) => worker.close())), env.SHUTDOWN_GRACE_MS);
      if (!finished) {
        // BullMQ ignores close(true) once close() has begun, and close() waits on its blocking
        // command, which a Redis Cluster with no master left retries for ever. Dropping the
        // connections ends it; the running jobs' locks lapse and another worker re-runs them.
        log.warn('grace period over; handing running jobs back to the queue');
        await boundedWait(Promise.all([...workers, ...webhookWorkers, ...batchWorkers].map((worker) => worker.disconnect())));
      }
      // Each step is bounded: whatever Redis, the store or an upstream do, the process ends.
      await boundedWait(stopListening());
      await boundedWait(stopBreakers());
      await boundedWait(stopQuotas());
      await boundedWait(stopLoads());
      await boundedWait(stopReaper());
      await boundedWait(stopSupervisor());
      await boundedWait(stopFileSweep());
      lane.close();
      await boundedWait(batchQueues.close());
      await boundedWait(drainer.stop());
      await boundedWait(webhookQueue.close());
      await boundedWait(webhookAgent.close());
      await boundedWait(ops?.close());
      await boundedWait(Promise.all(counted.map((queue) => queue.close())));
      await boundedWait(repository.close());
      await boundedWait(providers.close());
      await closeRedis([redis, queueConnection, subscriber, blocking]);
    },
  };
}
