import { stat } from 'node:fs/promises';
import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import type { Config } from '../config.ts';
import { buildApp } from './app.ts';
import { loadCatalogFile } from '../domain/catalog/load-catalog.ts';
import type { CatalogFile } from '../domain/catalog/schema.ts';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator.ts';
import { Authenticator } from './auth/authenticator.ts';
import { TenantStatusCache } from './auth/tenant-status.ts';
import type { KeyAdminDeps } from '../domain/access/key-admin.ts';
import type { TenantAdminDeps } from '../domain/tenants/tenant-admin.ts';
import { createJwtVerifier } from './auth/jwt/jwt-verifier.ts';
import { RequestDispatcher } from '../infra/queue/dispatcher.ts';
import { JobBatcher } from '../infra/queue/job-batcher.ts';
import type { RequestPorts } from './admission/handle-request.ts';
import { admissionDefaultsOf, createAdmission } from '../domain/admission/admission-ports.ts';
import { createStore } from '../infra/store/create-store.ts';
import type { Repository } from '../infra/store/repository.ts';
import { createRedisKeys, REQUEST_QUEUE, QUEUE_EVENTS_MAX_LEN, type RedisKeys } from '../infra/redis/keys.ts';
import { type RedisClient, assertNoEviction, boundedWait, closeRedis, connectRedis } from '../infra/redis/connections.ts';
import { defineScripts } from '../infra/redis/scripts.ts';
import { ReplyChannel } from '../infra/events/reply-channel.ts';
import { listenForInvalidations } from '../infra/redis/invalidations.ts';
import type { JobBatch } from '../infra/queue/job.ts';
import { OPERATIONS } from '../operations/index.ts';
import type { Operations } from '../operations/operation.ts';
import { Outbox, webhookOutboxRecord } from '../infra/outbox/outbox.ts';
import { createCachePorts } from './admission/cache-ports.ts';
import type { AuditSink } from '../domain/audit/audit-event.ts';
import { PromptCache, cacheKey } from '../domain/prompts/prompt-cache.ts';
import type { PromptAdminDeps } from '../domain/prompts/prompt-admin.ts';
import type { BudgetAdminDeps } from '../domain/budget/budget-admin.ts';
import { BudgetLedger } from '../domain/budget/budget-ledger.ts';
import { storeSpendSource } from '../domain/budget/store-spend-source.ts';
import { TenantSettingsCache } from '../domain/tenants/tenant-settings.ts';
import { followEvents } from '../infra/events/follow-events.ts';
import { TRACING_OFF, type Tracing } from '../infra/tracing/tracing.ts';
import { createMetricsRegistry } from '../infra/metrics/registry.ts';
import { WebMetrics } from '../infra/metrics/web-metrics.ts';
import { registerBacklogGauges } from '../infra/metrics/backlog-gauges.ts';
import { pinged, type Dependency } from '../infra/health/readiness.ts';
import { lastWorkerBeat, workerPresence } from '../infra/health/worker-presence.ts';
import { readBreakers } from '../infra/redis/breaker-states.ts';
import { BUILT_CONSOLE_DIR } from './plugins/console.ts';
import { startOpsListener } from '../infra/health/ops-listener.ts';
import type { WebhookAdminDeps } from '../domain/webhooks/webhook-admin.ts';
import { resolveHost } from '../infra/webhooks/guarded-agent.ts';
import { parseRetryDelays, WebhookQueue } from '../infra/webhooks/webhook-queue.ts';
import { KeptResponses } from '../infra/responses/kept-responses.ts';
import { ResponseStates } from '../infra/responses/response-state.ts';
import { liveOf, storedRecordOf } from '../infra/responses/kept-answer.ts';
import { publishCancellation } from '../infra/events/cancel-marks.ts';
import { endStream } from '../infra/events/end-stream.ts';
import { responsesFraming } from '../operations/responses/framing.ts';
import type { ResponseRouteDeps } from './routes/v1/responses.ts';
import { BatchQueues } from '../infra/queue/batch-jobs.ts';
import { BatchService } from '../domain/batches/batch-service.ts';

// Activations reach every web process at once through Redis; this bounds how long a lost
// invalidation message can leave a process on the previous version.
const PROMPT_CACHE_TTL_MS = 5_000;

// A replayed request's live events go to another process's reply channel: its follower reads the
// request's stream this often instead; replays are rare and a read is cheap.
const FOLLOW_POLL_MS = 25;

/** A built web tier: the app, and a stop that drains open responses first. */
export interface WebTier {
  app: FastifyInstance;
  repository: Repository;
  /** Stops accepting, lets open responses finish for up to the grace period, then closes everything. */
  close(): Promise<void>;
}

interface Connections {
  commands: RedisClient;
  subscriber: RedisClient;
  keys: RedisKeys;
  repository: Repository;
  catalog: CatalogFile;
  audit: AuditSink;
}

/** Prompt and budget administration, with their cache invalidations published through Redis. */
async function adminServices(c: Connections, prompts: PromptCache, settings: TenantSettingsCache, ledger: BudgetLedger) {
  await listenForInvalidations(c.subscriber, c.keys.promptInvalidations, (message) => prompts.invalidate(message));
  await listenForInvalidations(c.subscriber, c.keys.settingsInvalidations, (tenantId) => settings.invalidate(tenantId));
  const promptAdmin: PromptAdminDeps = {
    repository: c.repository,
    catalog: c.catalog,
    audit: c.audit,
    invalidate: async (tenantId, name) => void (await c.commands.publish(c.keys.promptInvalidations, cacheKey(tenantId, name))),
  };
  const budgetAdmin: BudgetAdminDeps = {
    repository: c.repository,
    audit: c.audit,
    creditRedis: (tenantId, toppedUp, amount) => ledger.topUp(tenantId, toppedUp, amount),
    invalidate: async (tenantId) => void (await c.commands.publish(c.keys.settingsInvalidations, tenantId)),
  };
  return { promptAdmin, budgetAdmin };
}

/** Tenant and key administration; a revoked key or a disabled tenant reaches every web process's authenticator at once. */
async function accessAdminServices(c: Connections, authenticator: Authenticator, operatorTenant: string) {
  await listenForInvalidations(c.subscriber, c.keys.authInvalidations, (tenantId) => authenticator.invalidateTenant(tenantId));
  const invalidate = async (tenantId: string) => void (await c.commands.publish(c.keys.authInvalidations, tenantId));
  const tenantAdmin: TenantAdminDeps = { repository: c.repository, audit: c.audit, invalidate, operatorTenant };
  const keyAdmin: KeyAdminDeps = { repository: c.repository, audit: c.audit, invalidate };
  return { tenantAdmin, keyAdmin };
}

// How often a resumed background stream reads the request's events.
const RESUME_POLL_MS = 200;

// How long an accepted background response's state lives until its job is queued (a round trip,
// normally): past it, the response of a web process that died in between is the reaper's.
const ACCEPT_WINDOW_MS = 60_000;

/** The web process's composition root: connections, store, catalog and app, built once; the app serves `operations`. */
export async function startWebTier(config: Config, log: Logger, tracing: Tracing = TRACING_OFF, operations: Operations = OPERATIONS): Promise<WebTier> {
  const { env } = config;
  const catalog = await loadCatalogFile(env.CATALOG);
  const keys = createRedisKeys(env.REDIS_PREFIX, env.QUEUE_SHARDS);
  const onRedisError = (error: Error) => log.warn({ err: error }, 'redis connection error');
  const commands = defineScripts(await connectRedis(config.redis, 'commands', 'gw-web-commands', onRedisError));
  await assertNoEviction(commands);
  const subscriber = await connectRedis(config.redis, 'subscriber', 'gw-web-replies', onRedisError);
  const queueConnection = await connectRedis(config.redis, 'queues', 'gw-web-queues', onRedisError);
  const repository = await createStore(config.store);
  const replies = new ReplyChannel({ subscriber, commands, keys, instanceId: ulid().toLowerCase(), silenceMs: 2_000, log });
  await replies.start();
  const queues = Array.from({ length: keys.queueShards }, (_, shard) => {
    const queue = new Queue<JobBatch>(REQUEST_QUEUE, {
      connection: queueConnection,
      prefix: keys.queuePrefix(shard),
      streams: { events: { maxLen: QUEUE_EVENTS_MAX_LEN } },
    });
    queue.on('error', onRedisError);
    return queue;
  });
  const outbox = new Outbox(commands, keys);
  const audit: AuditSink = (event) => outbox.push(event.tenantId, { kind: 'audit', event });
  const ledger = new BudgetLedger({ redis: commands, keys, spend: storeSpendSource(repository), reservationTtlMs: env.REQUEST_TIMEOUT_MS + 60_000 });
  // Series are kept only where something can read them.
  const registry = env.METRICS_PORT === undefined ? null : createMetricsRegistry();
  const metrics =
    registry && new WebMetrics(registry, { tenants: env.METRICS_TENANTS, models: new Set([...Object.keys(catalog.models), ...Object.keys(catalog.tiers)]) });
  if (registry) registerBacklogGauges(registry, { queues, redis: commands, keys, store: repository });
  const dependencies: Dependency[] = [
    pinged('redis', () => commands.ping()),
    pinged('store', () => repository.ping()),
    workerPresence(commands, keys.workerHeartbeat, env.READY_WORKER_WINDOW_MS),
  ];
  const dispatcher = new RequestDispatcher({
    batcher: new JobBatcher(queues, keys, { fairShare: env.TENANT_FAIR_SHARE, maxBatch: env.QUEUE_BATCH_MAX, windowMs: env.QUEUE_BATCH_WINDOW_MS }),
    replies,
    commands,
    keys,
    deadlines: { queueDeadlineMs: env.QUEUE_DEADLINE_MS, requestTimeoutMs: env.REQUEST_TIMEOUT_MS },
    log,
  });
  const kept = new KeptResponses(new ResponseStates(commands, keys), repository.responses);
  // An accepted background response is kept while it may wait, then run, then be polled.
  const backgroundTtlMs = env.BACKGROUND_QUEUE_DEADLINE_MS + env.REQUEST_TIMEOUT_MS + env.BACKGROUND_RESULT_TTL_S * 1000;
  const requests: RequestPorts = {
    plan: { catalog, prompts: new PromptCache(repository.prompts, PROMPT_CACHE_TTL_MS), responses: kept },
    background: {
      deadlineMs: env.BACKGROUND_QUEUE_DEADLINE_MS,
      accept: (tenantId, requestId, answer) =>
        kept.accept(
          storedRecordOf(tenantId, answer, new Date(answer.createdAt + backgroundTtlMs)),
          // Its input is in the store; Redis keeps the input of an ended response only (the next turn reads it).
          liveOf({ ...answer, input: null }, requestId, keys.shardOf(tenantId)),
          ACCEPT_WINDOW_MS,
        ),
      queued: (tenantId, id) => kept.queued(tenantId, id, backgroundTtlMs),
      detach: (job, options) => dispatcher.detach(Object.assign(job, { replyChannel: replies.channel }), options),
      find: (tenantId, id) => kept.find(tenantId, id),
      discard: async (tenantId, id) => {
        await kept.delete(tenantId, id, env.BACKGROUND_RESULT_TTL_S * 1000);
      },
    },
    settings: new TenantSettingsCache(repository, env.PII_DEFAULT_MODE, env.SETTINGS_CACHE_TTL_MS),
    admission: createAdmission(commands, keys, ledger, log, (tenantId, digest, since) => repository.usage.answeredBy(tenantId, digest, since)),
    // The job is the request's own: addressed in place rather than copied on every request.
    dispatch: (job, options) => dispatcher.dispatch(Object.assign(job, { replyChannel: replies.channel }), options),
    follow: (tenantId, requestId, afterSeq, finished) =>
      followEvents(commands, keys, tenantId, requestId, afterSeq, { pollMs: FOLLOW_POLL_MS, timeoutMs: env.REQUEST_TIMEOUT_MS, finished }),
    audit,
    sse: { keepAliveMs: env.SSE_KEEPALIVE_MS, maxBufferedBytes: env.SSE_MAX_BUFFERED_BYTES },
    metrics,
    defaults: admissionDefaultsOf(env),
    cache: createCachePorts(outbox, catalog, metrics),
  };
  const batchQueues = new BatchQueues(queueConnection, keys, (error) => log.warn({ err: error }, 'redis connection error'));
  const responses: ResponseRouteDeps = {
    kept,
    queues,
    admission: requests.admission,
    cancelRunning: (shard, requestId) => publishCancellation(commands, keys, { shard, requestId, sharesJob: false }, env.REQUEST_TIMEOUT_MS),
    endStream: (tenantId, requestId, replyChannel) =>
      endStream(commands, keys, { tenantId, requestId, replyChannel, ttlMs: env.BACKGROUND_RESULT_TTL_S * 1000 }),
    // A resumed stream may wait hours for its job: it reads the stream less often than a retried request does.
    follow: (tenantId, requestId, afterSeq, finished) =>
      followEvents(commands, keys, tenantId, requestId, afterSeq, { pollMs: RESUME_POLL_MS, timeoutMs: backgroundTtlMs, finished }),
    // Through the outbox, as a worker's end goes: a store away for a moment loses neither.
    ended: async (record) => {
      await outbox.push(record.tenantId, { kind: 'response', record });
      await outbox.push(record.tenantId, webhookOutboxRecord(record.tenantId, 'response.cancelled', record.id));
    },
    framing: responsesFraming,
    sse: requests.sse,
    keptTtlMs: env.BACKGROUND_RESULT_TTL_S * 1000,
  };
  const connections: Connections = { commands, subscriber, keys, repository, catalog, audit };
  const { promptAdmin, budgetAdmin } = await adminServices(connections, requests.plan.prompts, requests.settings, ledger);
  const jwt = createJwtVerifier(env);
  const authenticator = new Authenticator(
    new ApiKeyAuthenticator(repository, env.KEY_CACHE_TTL_MS),
    jwt,
    new TenantStatusCache(repository.tenants, env.KEY_CACHE_TTL_MS),
  );
  const { tenantAdmin, keyAdmin } = await accessAdminServices(connections, authenticator, env.OPERATOR_TENANT);
  // Resends only: the worker's outbox drainer queues the deliveries of new events.
  const webhookQueue = new WebhookQueue({
    connection: queueConnection,
    keys,
    repository,
    retryDelaysMs: parseRetryDelays(env.WEBHOOK_RETRY_DELAYS_MS),
    onError: onRedisError,
  });
  const webhookAdmin: WebhookAdminDeps = {
    repository,
    audit,
    urlRules: { allowPrivate: env.WEBHOOK_ALLOW_PRIVATE_URLS, resolve: resolveHost },
    resend: (tenantId, webhookId, event) => webhookQueue.resend(tenantId, webhookId, event),
  };
  let draining = false;
  const app = await buildApp({
    config,
    log,
    authenticator,
    operations,
    requests,
    ledger,
    responses,
    files: {
      files: repository.files,
      maxBytes: env.FILE_MAX_BYTES,
      ttlMs: env.FILE_TTL_S * 1000,
      maxBatchLines: env.BATCH_MAX_LINES,
      readByBatch: (tenantId, fileId) => repository.batches.readsFile(tenantId, fileId),
    },
    batches: new BatchService({
      batches: repository.batches,
      files: repository.files,
      enqueue: (job) => batchQueues.add(job),
      windowMs: env.BATCH_COMPLETION_WINDOW_MS,
    }),
    // The file's time, not the process's: every web process lists the same `created`.
    catalogCreated: Math.floor((await stat(env.CATALOG)).mtimeMs / 1000),
    repository,
    promptAdmin,
    budgetAdmin,
    tenantAdmin,
    keyAdmin,
    webhookAdmin,
    audit,
    dependencies,
    metrics,
    tracing,
    draining: () => draining,
    queues,
    lastWorkerBeat: () => lastWorkerBeat(commands, keys.workerHeartbeat),
    circuits: (deploymentIds) => readBreakers(commands, deploymentIds.map(keys.breaker), Date.now()),
    consoleDir: env.CONSOLE_DIR ?? BUILT_CONSOLE_DIR,
  });
  const ops =
    env.METRICS_PORT === undefined
      ? null
      : await startOpsListener(env.METRICS_HOST, env.METRICS_PORT, { dependencies, stopping: () => draining, metrics: registry });
  if (ops) log.info({ opsPort: ops.port }, 'operations listener ready');

  return {
    app,
    repository,
    async close() {
      draining = true;
      const timer = setTimeout(() => {
        log.warn({ open: replies.size }, 'grace period over; closing open connections');
        app.server.closeAllConnections();
      }, env.SHUTDOWN_GRACE_MS);
      // Connections whose response ends during the drain turn idle afterwards; close them as they do.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
      await app.close();
      await ops?.close();
      clearInterval(sweep);
      clearTimeout(timer);
      await boundedWait(replies.stop());
      await boundedWait(Promise.all(queues.map((queue) => queue.close())));
      await boundedWait(webhookQueue.close());
      await boundedWait(batchQueues.close());
      await boundedWait(repository.close());
      await boundedWait(jwt?.close());
      await closeRedis([commands, queueConnection, subscriber]);
    },
  };
}
