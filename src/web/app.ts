import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Authenticator } from './auth/authenticator.ts';
import type { RequestPorts } from './admission/handle-request.ts';
import type { BudgetLedger } from '../domain/budget/budget-ledger.ts';
import type { BudgetAdminDeps } from '../domain/budget/budget-admin.ts';
import type { Repository } from '../infra/store/repository.ts';
import type { PromptAdminDeps } from '../domain/prompts/prompt-admin.ts';
import type { TenantAdminDeps } from '../domain/tenants/tenant-admin.ts';
import type { KeyAdminDeps } from '../domain/access/key-admin.ts';
import type { WebhookAdminDeps } from '../domain/webhooks/webhook-admin.ts';
import type { AuditSink } from '../domain/audit/audit-event.ts';
import { ServiceUnavailableError } from '../errors/gateway-error.ts';
import { newRequestId } from '../infra/http/request-id.ts';
import { clientErrorHandler, errorsPlugin, frameworkErrorHandler } from './plugins/errors.ts';
import { authPlugin } from './plugins/auth.ts';
import { requestBoundsPlugin } from './plugins/request-bounds.ts';
import { operationRoutes } from './routes/v1/operation-routes.ts';
import { modelRoutes } from './routes/v1/models.ts';
import { healthRoutes } from './routes/health.ts';
import { tracingPlugin } from './plugins/tracing.ts';
import type { Tracing } from '../infra/tracing/tracing.ts';
import type { Dependency } from '../infra/health/readiness.ts';
import { webMetricsPlugin, type WebMetrics } from '../infra/metrics/web-metrics.ts';
import { promptRoutes } from './routes/v1/prompts.ts';
import { usageRoutes } from './routes/v1/usage.ts';
import { budgetRoutes } from './routes/v1/budgets.ts';
import { auditRoutes } from './routes/v1/audit.ts';
import { responseRoutes, type ResponseRouteDeps } from './routes/v1/responses.ts';
import { fileRoutes, type FileRouteDeps } from './routes/v1/files.ts';
import { batchRoutes } from './routes/v1/batches.ts';
import { messageBatchRoutes } from './routes/v1/message-batches.ts';
import { bodyChecks } from '../operations/batch-body-check.ts';
import { byKind } from '../operations/index.ts';
import type { BatchService } from '../domain/batches/batch-service.ts';
import { internalRoutes } from './routes/internal/index.ts';
import { openapiPlugin } from './openapi/openapi-plugin.ts';
import { QUEUE_BOARD_PREFIX, queueBoardPlugin } from './plugins/queue-board.ts';
import type { JobBatch } from '../infra/queue/job.ts';
import type { Operations } from '../operations/operation.ts';
import { permissionsOf } from './auth/permissions.ts';
import type { ReadCircuits } from './routes/internal/catalog.ts';
import type { LastWorkerBeat } from './routes/internal/queues.ts';
import { CONSOLE_PREFIX, consolePlugin } from './plugins/console.ts';

/** Everything the web app uses, built by the composition root (src/web/web-tier.ts) or a test. */
export interface AppDeps {
  config: Config;
  log: Logger;
  authenticator: Authenticator;
  /** The operations served, each at its routes (src/operations/index.ts lists the gateway's). */
  operations: Operations;
  /** What a request of an operation passes through (src/web/admission/handle-request.ts). */
  requests: RequestPorts;
  /** The budget counters, which GET /v1/budgets reports. */
  ledger: BudgetLedger;
  /** Kept responses' routes (retrieve, cancel, delete, input items). */
  responses: ResponseRouteDeps;
  /** Files' routes: the store, and the limits of an upload. */
  files: FileRouteDeps;
  /** Batches (OpenAI's and Anthropic's), made and read. */
  batches: BatchService;
  /** When the catalog was written (Unix seconds): the `created` of every model in /v1/models. */
  catalogCreated: number;
  repository: Repository;
  promptAdmin: PromptAdminDeps;
  budgetAdmin: BudgetAdminDeps;
  tenantAdmin: TenantAdminDeps;
  keyAdmin: KeyAdminDeps;
  webhookAdmin: WebhookAdminDeps;
  audit: AuditSink;
  /** What /readyz probes. */
  dependencies: readonly Dependency[];
  /** Null when the process keeps no metrics (no METRICS_PORT). */
  metrics: WebMetrics | null;
  /** The process's tracing; off, it adds nothing to a request. */
  tracing: Tracing;
  /** True once SIGTERM arrived: new requests are refused with 503. */
  draining: () => boolean;
  /** The request queue, one per shard, for the queue board and GET /internal/v1/queues. */
  queues: ReadonlyArray<Queue<JobBatch>>;
  /** When a worker last showed itself (the heartbeat /readyz reads). */
  lastWorkerBeat: LastWorkerBeat;
  /** The deployments' circuit breakers, for GET /internal/v1/catalog. */
  circuits: ReadCircuits;
  /** The built console's folder (index.html and assets/). */
  consoleDir: string;
}

// How often Node looks for clients past their headers and request timeouts.
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

// find-my-way's default: a path parameter longer than this is answered 414.
const MAX_PARAM_LENGTH = 100;

/** The web app as one root plugin tree: errors, auth, routes. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { env } = deps.config;
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // Two log lines per request cost more than the rest of the web tier's work; the worker logs each completion.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: env.BODY_LIMIT_BYTES,
    // Fastify ships requestTimeout at 0, so a slowloris client could take forever to send
    // its request. The idle socket timeout stays 0: a non-streamed completion may be
    // silent for minutes; REQUEST_TIMEOUT_MS bounds the answer instead.
    requestTimeout: env.CLIENT_REQUEST_TIMEOUT_MS,
    // Node checks those limits every connectionsCheckingInterval (30 s by default): a trickling
    // client would hold its connection that much longer than it may.
    http: {
      headersTimeout: Math.min(env.CLIENT_HEADERS_TIMEOUT_MS, env.CLIENT_REQUEST_TIMEOUT_MS),
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    connectionTimeout: 0,
    keepAliveTimeout: 72_000,
    return503OnClosing: false,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler(MAX_PARAM_LENGTH),
    clientErrorHandler,
  });
  // First, so that a model route's span covers every hook, the draining refusal and authentication included.
  await app.register(tracingPlugin, { tracing: deps.tracing });
  if (deps.metrics) await app.register(webMetricsPlugin, { metrics: deps.metrics });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (deps.draining()) {
      reply.header('connection', 'close');
      throw new ServiceUnavailableError('The gateway is restarting; retry shortly.', 1);
    }
  });
  await app.register(errorsPlugin, { bodyLimit: env.BODY_LIMIT_BYTES });
  await app.register(requestBoundsPlugin);
  const permissions = permissionsOf(deps.operations);
  await app.register(authPlugin, { authenticator: deps.authenticator, audit: deps.audit, operatorTenant: env.OPERATOR_TENANT, permissions });
  await app.register(openapiPlugin, { operations: deps.operations });
  await app.register(healthRoutes, { dependencies: deps.dependencies });
  for (const operation of deps.operations) await app.register(operationRoutes, { operation, ports: deps.requests, bodyLimit: env.BODY_LIMIT_BYTES });
  await app.register(modelRoutes, { catalog: deps.requests.plan.catalog, created: deps.catalogCreated });
  await app.register(promptRoutes, { prompts: deps.requests.plan.prompts });
  await app.register(usageRoutes, { usage: deps.repository.usage });
  await app.register(responseRoutes, deps.responses);
  await app.register(fileRoutes, deps.files);
  await app.register(batchRoutes, { batches: deps.batches });
  await app.register(messageBatchRoutes, {
    batches: deps.batches,
    files: deps.files.files,
    check: bodyChecks(byKind(deps.operations), deps.requests.plan.catalog),
    maxLines: deps.files.maxBatchLines,
    bodyLimitBytes: deps.files.maxBytes,
    fileTtlMs: deps.files.ttlMs,
  });
  await app.register(budgetRoutes, { ledger: deps.ledger, settings: deps.requests.settings });
  await app.register(auditRoutes, { audit: deps.repository.audit });
  await app.register(internalRoutes, {
    prefix: '/internal/v1',
    promptAdmin: deps.promptAdmin,
    budgetAdmin: deps.budgetAdmin,
    piiAdmin: { repository: deps.repository, audit: deps.audit, invalidate: deps.budgetAdmin.invalidate },
    tenantAdmin: deps.tenantAdmin,
    keyAdmin: deps.keyAdmin,
    webhookAdmin: deps.webhookAdmin,
    settings: deps.requests.settings,
    ledger: deps.ledger,
    audit: deps.repository.audit,
    permissions,
    catalog: deps.requests.plan.catalog,
    circuits: deps.circuits,
    queues: deps.queues,
    lastWorkerBeat: deps.lastWorkerBeat,
    queueBoard: QUEUE_BOARD_PREFIX,
  });
  await app.register(queueBoardPlugin, { prefix: QUEUE_BOARD_PREFIX, queues: deps.queues });
  await app.register(consolePlugin, { prefix: CONSOLE_PREFIX, dir: deps.consoleDir });
  return app;
}
