import type { RedisClient } from '../../infra/redis/connections.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Env } from '../../config.ts';
import type { CatalogFile } from '../../domain/catalog/schema.ts';
import type { PromptCache } from '../../domain/prompts/prompt-cache.ts';
import type { TenantSettings, TenantSettingsCache } from '../../domain/tenants/tenant-settings.ts';
import type { RateLimiter } from '../../domain/rate-limit/rate-limiter.ts';
import type { BudgetLedger } from '../../domain/budget/budget-ledger.ts';
import type { IdempotencyStore } from '../../domain/idempotency/idempotency-store.ts';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import type { Operation } from '../../operations/operation.ts';
import type { SseFraming } from '../../operations/sse-framing.ts';
import { readFeature } from './feature.ts';
import { limitsOf } from './rate-limit-step.ts';
import { readIdempotencyKey, readLastEventId } from './idempotency-step.ts';
import { estimateCostMicros, reservationOf } from './budget-step.ts';
import { admitRequest, type Admission, type AdmissionInput } from './admission-step.ts';
import { buildJob } from './build-job.ts';
import { followEvents } from '../../infra/events/follow-events.ts';
import { relayJson } from '../relay/relay-json.ts';
import { relaySse, type SseOptions } from '../relay/relay-sse.ts';
import type { RequestDispatcher } from '../../infra/queue/dispatcher.ts';
import type { Dispatch } from '../../infra/events/event-queue.ts';
import { applyPiiPolicy, auditPii } from './pii-step.ts';
import type { AuditSink } from '../../domain/audit/audit-event.ts';
import { PiiDetectedError } from '../../errors/gateway-error.ts';
import { isRedisUnavailable } from '../../infra/redis/connections.ts';
import { retryUnavailable } from '../../infra/redis/retry-unavailable.ts';
import { carrierOf } from '../../infra/tracing/trace-carrier.ts';
import { ATTR_GATEWAY_ADMISSION, ATTR_GATEWAY_PII_CATEGORIES, ATTR_GATEWAY_PII_MODE, ATTR_GATEWAY_QUEUED, ATTR_GATEWAY_REQUESTED_MODEL, ATTR_GATEWAY_STREAM, EVENT_ADMITTED, EVENT_ENQUEUED, EVENT_PII_SCREENED, EVENT_RESOLVED } from '../../infra/tracing/gateway-attributes.ts';
import type { WebMetrics } from '../../infra/metrics/web-metrics.ts';

/** Everything a request passes through on the web tier, built once by the composition root. */
export interface RequestServices {
  env: Env;
  catalog: CatalogFile;
  prompts: PromptCache;
  settings: TenantSettingsCache;
  limiter: RateLimiter;
  ledger: BudgetLedger;
  idempotency: IdempotencyStore;
  dispatcher: RequestDispatcher;
  commands: RedisClient;
  keys: RedisKeys;
  replyChannel: string;
  sse: SseOptions;
  audit: AuditSink;
  /** Null when the process keeps no metrics (no METRICS_PORT). */
  metrics: WebMetrics | null;
}

function relay(request: FastifyRequest, reply: FastifyReply, dispatch: Dispatch, stream: boolean, framing: SseFraming, services: RequestServices) {
  services.metrics?.admitted(request, reply, dispatch.events);
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) dispatch.cancel();
  });
  return stream ? relaySse(request, reply, dispatch, framing, services.sse) : relayJson(reply, dispatch);
}

/**
 * The PII step: the policy's outcome; a block is audited and thrown before admission, so that
 * it costs Redis nothing. A mask or flag is audited once the request is admitted.
 */
function screenPii(services: RequestServices, request: FastifyRequest, policy: TenantSettings['pii'], operation: Operation, body: unknown) {
  try {
    return applyPiiPolicy(policy, body, operation.web.mapTexts);
  } catch (error) {
    if (error instanceof PiiDetectedError) auditPii(services.audit, request, 'block', error.categories);
    throw error;
  }
}

/**
 * Gives back what admission took for a request that will not run: its idempotency claim (so a
 * retry with the same key runs) and its reservation. Both are safe to repeat, and are retried
 * while Redis is away, after the client has its answer.
 */
function giveBack(services: RequestServices, request: FastifyRequest, idempotencyKey: string | null, budgetKeys: string[]): void {
  const { tenantId } = request.principal;
  if (idempotencyKey) void retryUnavailable(() => services.idempotency.release(tenantId, idempotencyKey, request.id)).catch((error: unknown) => request.log.warn({ err: error }, 'releasing the idempotency key failed'));
  void retryUnavailable(() => services.ledger.settle(tenantId, request.id, budgetKeys, 0)).catch((error: unknown) => request.log.warn({ err: error }, 'releasing the budget reservation failed'));
}

/** Admits the request; when Redis could not be reached, gives back whatever the admission may have taken. */
async function admitOrGiveBack(services: RequestServices, request: FastifyRequest, input: AdmissionInput, reply: FastifyReply): Promise<Admission> {
  try {
    return await admitRequest(services, input, reply);
  } catch (error) {
    // A connection lost with the script's reply does not say whether the script ran: the client's
    // 503 must not leave a claim its retry would wait on, or a reservation held until it expires.
    if (isRedisUnavailable(error)) giveBack(services, request, input.idempotencyKey, services.ledger.settlementKeys(input.reservation));
    throw error;
  }
}

/**
 * Every queued operation after authentication and schema validation: the operation resolves the
 * model (and a named prompt), the PII policy reads its texts, admission (rate limits, idempotency
 * claim and budget in one Redis round trip), enqueue, relay in the operation's framing. Each step
 * done is an event of the request's span when it is traced (src/web/plugins/tracing.ts).
 */
export async function handleRequest(services: RequestServices, operation: Operation, request: FastifyRequest, body: unknown, reply: FastifyReply) {
  const { headers, principal } = request;
  const feature = readFeature(headers['x-feature']);
  const idempotencyKey = readIdempotencyKey(headers['idempotency-key']);
  const lastEventId = readLastEventId(headers['last-event-id']);
  const plan = await operation.web.plan(body, { catalog: services.catalog, prompts: services.prompts, tenantId: principal.tenantId, headers });
  const settings = await services.settings.get(principal.tenantId);
  const { span } = request;
  span?.addEvent(EVENT_RESOLVED, { [ATTR_GATEWAY_REQUESTED_MODEL]: plan.requestedModel, [ATTR_GATEWAY_STREAM]: plan.stream });
  const promptTokens = plan.promptTokens ?? plan.promptEstimate;
  const pii = screenPii(services, request, settings.pii, operation, plan.body);
  span?.addEvent(EVENT_PII_SCREENED, { [ATTR_GATEWAY_PII_MODE]: settings.pii.mode, [ATTR_GATEWAY_PII_CATEGORIES]: pii.categories });
  const estimateMicros = estimateCostMicros(plan.candidates, promptTokens, plan.maxOutputTokens);
  const admission = await admitOrGiveBack(services, request, {
    principal,
    tokens: promptTokens + (plan.maxOutputTokens ?? 0),
    limits: limitsOf(settings.plan, services.env),
    idempotencyKey,
    fingerprint: { path: operation.path, body },
    reservation: reservationOf(settings, { tenantId: principal.tenantId, requestId: request.id, feature, estimateMicros, maxQueued: settings.plan?.maxQueued ?? services.env.TENANT_MAX_QUEUED }),
  }, reply);
  span?.addEvent(EVENT_ADMITTED, { [ATTR_GATEWAY_ADMISSION]: admission.action, [ATTR_GATEWAY_QUEUED]: admission.action === 'run' ? admission.queued : undefined });
  auditPii(services.audit, request, settings.pii.mode, pii.categories);
  if (admission.action === 'relay') {
    reply.header('idempotent-replayed', 'true');
    const followed = followEvents(services.commands, services.keys, principal.tenantId, admission.requestId, lastEventId, { pollMs: 25, timeoutMs: services.env.REQUEST_TIMEOUT_MS, finished: admission.finished });
    return relay(request, reply, followed, plan.stream, operation.web.framing, services);
  }
  const claimKey = idempotencyKey ? services.idempotency.keyFor(principal.tenantId, idempotencyKey) : null;
  const job = buildJob(request.id, principal, services.replyChannel, { operation: operation.name, ...operation.web.jobPayload(pii.body, plan) }, plan, { feature, piiFlags: pii.categories, idempotencyKey: claimKey, budgetKeys: admission.budgetKeys, traceContext: span ? carrierOf(span) : undefined });
  const abandon = () => giveBack(services, request, idempotencyKey, admission.budgetKeys);
  let dispatch: Dispatch;
  try {
    dispatch = await services.dispatcher.dispatch(job, { queued: admission.queued, resumable: idempotencyKey !== null, onAbandoned: abandon });
  } catch (error) {
    abandon();
    throw error;
  }
  span?.addEvent(EVENT_ENQUEUED);
  return relay(request, reply, dispatch, plan.stream, operation.web.framing, services);
}
