import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlanContext } from '../../operations/web-operation.ts';
import type { TenantSettings, TenantSettingsCache } from '../../domain/tenants/tenant-settings.ts';
import type { Admission } from '../../domain/admission/admission.ts';
import type { Operation } from '../../operations/operation.ts';
import type { SseFraming } from '../../operations/sse-framing.ts';
import { readFeature } from './feature.ts';
import { limitsOf } from '../../domain/admission/rate-limits.ts';
import type { AdmissionDefaults } from '../../domain/admission/admission-ports.ts';
import { readIdempotencyKey, readLastEventId } from './idempotency-step.ts';
import { estimateCostMicros, keyConcurrencyOf, reservationOf } from '../../domain/admission/reservation.ts';
import { admitRequest } from './admission-step.ts';
import { buildJob, type UnaddressedJob } from '../../operations/build-job.ts';
import { relayJson } from '../relay/relay-json.ts';
import { relaySse, type SseOptions } from '../relay/relay-sse.ts';
import type { DetachedOptions, DispatchOptions } from '../../infra/queue/dispatcher.ts';
import type { DetachedRequest } from '../../operations/web-operation.ts';
import type { KeptAnswer } from '../../infra/responses/kept-answer.ts';
import type { KeptResponse } from '../../infra/responses/kept-responses.ts';
import type { Taken } from '../../domain/admission/admission.ts';
import type { Dispatch } from '../../infra/events/event-queue.ts';
import { auditPii } from './pii-step.ts';
import { applyPiiPolicy } from '../../domain/pii/apply-policy.ts';
import type { AuditSink } from '../../domain/audit/audit-event.ts';
import { InternalError, PiiDetectedError, StreamNotHeldError } from '../../errors/gateway-error.ts';
import { carrierOf } from '../../infra/tracing/trace-carrier.ts';
import {
  ATTR_GATEWAY_ADMISSION,
  ATTR_GATEWAY_PII_CATEGORIES,
  ATTR_GATEWAY_PII_MODE,
  ATTR_GATEWAY_QUEUED,
  ATTR_GATEWAY_REQUESTED_MODEL,
  ATTR_GATEWAY_STREAM,
  EVENT_ADMITTED,
  EVENT_ENQUEUED,
  EVENT_PII_SCREENED,
  EVENT_RESOLVED,
} from '../../infra/tracing/gateway-attributes.ts';
import type { WebMetrics } from '../../infra/metrics/web-metrics.ts';
import { cacheOrder, cacheRead, hitPriceOf, observeCaching, planRequestCaching, serveHit, type CachePorts } from './cache-step.ts';

/** Queues a request's job, addressed to this process's reply channel, and returns its events. */
export type DispatchJob = (job: UnaddressedJob, options: DispatchOptions) => Promise<Dispatch>;

/** Relays the events of an earlier request after `afterSeq` (an idempotent replay); `finished`: it had ended when the key was claimed. */
export type FollowRequest = (tenantId: string, requestId: string, afterSeq: number, finished: boolean) => Dispatch;

/** What the web tier does with a background request: it records it, queues it, and answers at once. */
export interface BackgroundPorts {
  /** How long its job may wait for a worker. */
  deadlineMs: number;
  /** Records the accepted request (Redis, then the store) before its job is queued. */
  accept(tenantId: string, requestId: string, kept: KeptAnswer): Promise<void>;
  /** Its job is queued: what was recorded is kept as long as it may wait and run. */
  queued(tenantId: string, id: string): Promise<void>;
  /** Queues its job; nothing waits for its events. */
  detach(job: UnaddressedJob, options: DetachedOptions): Promise<void>;
  /** A kept response, for an idempotent retry of an accepted one. */
  find(tenantId: string, id: string): Promise<KeptResponse | null>;
  /** Removes an accepted response whose job could not be queued. */
  discard(tenantId: string, id: string): Promise<void>;
}

/** The ports a request passes through on the web tier, built once by the composition root. */
export interface RequestPorts {
  /** What an operation's plan reads besides the request. */
  plan: Pick<PlanContext, 'catalog' | 'prompts' | 'responses'>;
  background: BackgroundPorts;
  settings: TenantSettingsCache;
  admission: Pick<Admission, 'admit' | 'giveBack'>;
  dispatch: DispatchJob;
  follow: FollowRequest;
  audit: AuditSink;
  sse: SseOptions;
  /** Null when the process keeps no metrics (no METRICS_PORT). */
  metrics: WebMetrics | null;
  defaults: AdmissionDefaults;
  /** The response cache: look-ups, and what a hit is charged and recorded with. */
  cache: CachePorts;
}

function relay(request: FastifyRequest, reply: FastifyReply, dispatch: Dispatch, stream: boolean, framing: SseFraming, ports: RequestPorts, opening?: string) {
  ports.metrics?.admitted(request, reply, dispatch.events);
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) dispatch.cancel();
  });
  return stream ? relaySse(request, reply, dispatch, framing, ports.sse, opening) : relayJson(reply, dispatch);
}

/**
 * A background request, admitted: recorded (so that it can be polled, and so that the reaper
 * finds it should Redis lose its job), queued, and answered at once with its queued Response;
 * a stream follows its events from there, and leaving it does not stop the job.
 */
async function accept(
  ports: RequestPorts,
  operation: Operation,
  request: FastifyRequest,
  reply: FastifyReply,
  job: UnaddressedJob,
  detached: DetachedRequest,
  admitted: { queued: number; taken: Taken },
) {
  const abandon = () => void ports.admission.giveBack(admitted.taken);
  const { kept } = detached;
  job.enqueuedAt = kept.createdAt;
  job.background = { deadlineAt: kept.createdAt + ports.background.deadlineMs };
  await ports.background.accept(job.tenantId, job.requestId, kept).catch((error: unknown) => {
    abandon();
    throw error;
  });
  let dispatch: Dispatch | null = null;
  try {
    if (kept.stream) dispatch = await ports.dispatch(job, { queued: admitted.queued, resumable: true, onAbandoned: abandon });
    else await ports.background.detach(job, { queued: admitted.queued, onAbandoned: abandon });
  } catch (error) {
    // The client is told it failed: the response it was never given must not be found queued.
    abandon();
    await ports.background.discard(job.tenantId, kept.id).catch(() => undefined);
    throw error;
  }
  request.span?.addEvent(EVENT_ENQUEUED);
  await ports.background.queued(job.tenantId, kept.id);
  if (dispatch) return relay(request, reply, dispatch, true, operation.web.framing, ports, detached.opening);
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(kept.body));
}

/** An idempotent retry of a background request answers the response as it stands. */
async function acceptedAgain(ports: RequestPorts, reply: FastifyReply, tenantId: string, requestId: string) {
  const kept = await ports.background.find(tenantId, `resp_${requestId}`);
  if (!kept) throw new InternalError('The response this Idempotency-Key was first used for is no longer available.');
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(kept.body));
}

/**
 * The PII step: the policy's outcome; a block is audited and thrown before admission, so that
 * it costs Redis nothing. A mask or flag is audited once the request is admitted.
 */
function screenPii(ports: RequestPorts, request: FastifyRequest, policy: TenantSettings['pii'], operation: Operation, body: unknown) {
  try {
    return applyPiiPolicy(policy, body, operation.web.mapTexts);
  } catch (error) {
    if (error instanceof PiiDetectedError) auditPii(ports.audit, request, 'block', error.categories);
    throw error;
  }
}

/**
 * Every queued operation after authentication and schema validation: the operation resolves the
 * model (and a named prompt), the PII policy reads its texts, admission (the cache's look-up, rate
 * limits, idempotency claim and budget in one Redis round trip; a hit is served there), enqueue, relay in the operation's framing. Each step
 * done is an event of the request's span when it is traced (src/web/plugins/tracing.ts).
 */
export async function handleRequest(ports: RequestPorts, operation: Operation, request: FastifyRequest, body: unknown, reply: FastifyReply) {
  const { headers, principal } = request;
  const feature = readFeature(headers['x-feature']);
  const idempotencyKey = readIdempotencyKey(headers['idempotency-key']);
  const lastEventId = readLastEventId(headers['last-event-id']);
  const settings = await ports.settings.get(principal.tenantId);
  const plan = await operation.web.plan(body, { ...ports.plan, tenantId: principal.tenantId, requestId: request.id, settings, headers });
  const { span } = request;
  span?.addEvent(EVENT_RESOLVED, { [ATTR_GATEWAY_REQUESTED_MODEL]: plan.requestedModel, [ATTR_GATEWAY_STREAM]: plan.stream });
  const promptTokens = plan.promptTokens ?? plan.promptEstimate;
  const pii = screenPii(ports, request, settings.pii, operation, plan.body);
  span?.addEvent(EVENT_PII_SCREENED, { [ATTR_GATEWAY_PII_MODE]: settings.pii.mode, [ATTR_GATEWAY_PII_CATEGORIES]: pii.categories });
  // The reservation bounds the cost (prompt and output at most), so concurrent requests never spend past a limit.
  const estimateMicros = estimateCostMicros(plan.candidates, plan.promptBound, plan.maxOutputTokens);
  const detached = operation.web.detach?.(pii.body, { requestId: request.id, enqueuedAt: Date.now() }) ?? null;
  const payload = operation.web.jobPayload(pii.body, plan);
  const tokens = promptTokens + (plan.maxOutputTokens ?? 0);
  const limits = limitsOf(settings.plan, ports.defaults.rateLimits, principal.limits);
  const candidates = plan.candidates.map((model) => model.alias);
  const caching = planRequestCaching(operation, request, reply, {
    settings,
    payload,
    candidates,
    idempotent: idempotencyKey !== null,
    detached: detached !== null,
  });
  const admission = await admitRequest(
    ports.admission,
    {
      principal,
      tokens,
      limits,
      idempotencyKey,
      fingerprint: { path: operation.path, body },
      reservation: reservationOf(settings, {
        tenantId: principal.tenantId,
        requestId: request.id,
        feature,
        estimateMicros,
        maxQueued: settings.plan?.maxQueued ?? ports.defaults.maxQueued,
        // A background request's reservation holds while it may wait, and then run.
        ttlMs: detached ? ports.background.deadlineMs + ports.defaults.requestTimeoutMs : undefined,
        keyConcurrency: keyConcurrencyOf(principal),
      }),
      cache: cacheRead(caching, settings),
    },
    reply,
  ).catch((error: unknown) => {
    observeCaching(ports.cache, principal.tenantId, caching, null);
    throw error;
  });
  observeCaching(ports.cache, principal.tenantId, caching, admission);
  span?.addEvent(EVENT_ADMITTED, {
    [ATTR_GATEWAY_ADMISSION]: admission.action,
    [ATTR_GATEWAY_QUEUED]: admission.action === 'run' ? admission.queued : undefined,
  });
  auditPii(ports.audit, request, settings.pii.mode, pii.categories);
  if (admission.action === 'cached') {
    const hit = await serveHit(ports.cache, operation, reply, admission.entry, {
      hit: {
        requestId: request.id,
        tenantId: principal.tenantId,
        keyId: principal.keyId,
        feature,
        operation: operation.name,
        requestedModel: plan.requestedModel,
        prompt: plan.prompt,
        stream: plan.stream,
        piiFlags: pii.categories,
        costMicros: hitPriceOf(settings),
      },
      payload,
    });
    return relay(request, reply, hit, plan.stream, operation.web.framing, ports);
  }
  if (admission.action === 'relay') {
    reply.header('idempotent-replayed', 'true');
    if (detached && !detached.kept.stream) return acceptedAgain(ports, reply, principal.tenantId, admission.requestId);
    return relay(
      request,
      reply,
      ports.follow(principal.tenantId, admission.requestId, lastEventId, admission.finished),
      plan.stream,
      operation.web.framing,
      ports,
    );
  }
  const { taken } = admission;
  if (idempotencyKey !== null && lastEventId > 0) {
    // A resumption whose key no request holds any more (its Redis came back empty): running it anew would splice
    // another answer's events after the client's.
    await ports.admission.giveBack(taken);
    throw new StreamNotHeldError();
  }
  const job = buildJob(request.id, principal, { operation: operation.name, ...payload }, plan, {
    feature,
    piiFlags: pii.categories,
    idempotencyKey: taken.claimKey,
    budgetKeys: taken.budgetKeys,
    traceContext: span ? carrierOf(span) : undefined,
    cache: cacheOrder(caching, settings),
  });
  if (detached) return accept(ports, operation, request, reply, job, detached, { queued: admission.queued, taken });
  const abandon = () => void ports.admission.giveBack(taken);
  let dispatch: Dispatch;
  try {
    dispatch = await ports.dispatch(job, { queued: admission.queued, resumable: idempotencyKey !== null, onAbandoned: abandon });
  } catch (error) {
    abandon();
    throw error;
  }
  span?.addEvent(EVENT_ENQUEUED);
  return relay(request, reply, dispatch, plan.stream, operation.web.framing, ports);
}
