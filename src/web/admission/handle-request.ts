import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlanContext } from '../../operations/web-operation.ts';
import type { TenantSettings, TenantSettingsCache } from '../../domain/tenants/tenant-settings.ts';
import type { Admission } from '../../domain/admission/admission.ts';
import type { Operation } from '../../operations/operation.ts';
import type { SseFraming } from '../../operations/sse-framing.ts';
import { readFeature } from './feature.ts';
import { limitsOf, type TenantLimits } from './rate-limit-step.ts';
import { readIdempotencyKey, readLastEventId } from './idempotency-step.ts';
import { estimateCostMicros, reservationOf } from './budget-step.ts';
import { admitRequest } from './admission-step.ts';
import { buildJob, type UnaddressedJob } from './build-job.ts';
import { relayJson } from '../relay/relay-json.ts';
import { relaySse, type SseOptions } from '../relay/relay-sse.ts';
import type { DispatchOptions } from '../../infra/queue/dispatcher.ts';
import type { Dispatch } from '../../infra/events/event-queue.ts';
import { applyPiiPolicy, auditPii } from './pii-step.ts';
import type { AuditSink } from '../../domain/audit/audit-event.ts';
import { PiiDetectedError } from '../../errors/gateway-error.ts';
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

/** Queues a request's job, addressed to this process's reply channel, and returns its events. */
export type DispatchJob = (job: UnaddressedJob, options: DispatchOptions) => Promise<Dispatch>;

/** Relays the events of an earlier request after `afterSeq` (an idempotent replay); `finished`: it had ended when the key was claimed. */
export type FollowRequest = (tenantId: string, requestId: string, afterSeq: number, finished: boolean) => Dispatch;

/** The configured defaults a request falls back on where its tenant's plan sets none. */
export interface AdmissionDefaults {
  /** 0: no limit. */
  rateLimits: TenantLimits;
  /** Requests of one tenant queued or running at once. */
  maxQueued: number;
}

/** The ports a request passes through on the web tier, built once by the composition root. */
export interface RequestPorts {
  /** What an operation's plan reads besides the request. */
  plan: Pick<PlanContext, 'catalog' | 'prompts'>;
  settings: TenantSettingsCache;
  admission: Pick<Admission, 'admit' | 'giveBack'>;
  dispatch: DispatchJob;
  follow: FollowRequest;
  audit: AuditSink;
  sse: SseOptions;
  /** Null when the process keeps no metrics (no METRICS_PORT). */
  metrics: WebMetrics | null;
  defaults: AdmissionDefaults;
}

function relay(request: FastifyRequest, reply: FastifyReply, dispatch: Dispatch, stream: boolean, framing: SseFraming, ports: RequestPorts) {
  ports.metrics?.admitted(request, reply, dispatch.events);
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) dispatch.cancel();
  });
  return stream ? relaySse(request, reply, dispatch, framing, ports.sse) : relayJson(reply, dispatch);
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
 * model (and a named prompt), the PII policy reads its texts, admission (rate limits, idempotency
 * claim and budget in one Redis round trip), enqueue, relay in the operation's framing. Each step
 * done is an event of the request's span when it is traced (src/web/plugins/tracing.ts).
 */
export async function handleRequest(ports: RequestPorts, operation: Operation, request: FastifyRequest, body: unknown, reply: FastifyReply) {
  const { headers, principal } = request;
  const feature = readFeature(headers['x-feature']);
  const idempotencyKey = readIdempotencyKey(headers['idempotency-key']);
  const lastEventId = readLastEventId(headers['last-event-id']);
  const plan = await operation.web.plan(body, { catalog: ports.plan.catalog, prompts: ports.plan.prompts, tenantId: principal.tenantId, headers });
  const settings = await ports.settings.get(principal.tenantId);
  const { span } = request;
  span?.addEvent(EVENT_RESOLVED, { [ATTR_GATEWAY_REQUESTED_MODEL]: plan.requestedModel, [ATTR_GATEWAY_STREAM]: plan.stream });
  const promptTokens = plan.promptTokens ?? plan.promptEstimate;
  const pii = screenPii(ports, request, settings.pii, operation, plan.body);
  span?.addEvent(EVENT_PII_SCREENED, { [ATTR_GATEWAY_PII_MODE]: settings.pii.mode, [ATTR_GATEWAY_PII_CATEGORIES]: pii.categories });
  const estimateMicros = estimateCostMicros(plan.candidates, promptTokens, plan.maxOutputTokens);
  const admission = await admitRequest(
    ports.admission,
    {
      principal,
      tokens: promptTokens + (plan.maxOutputTokens ?? 0),
      limits: limitsOf(settings.plan, ports.defaults.rateLimits),
      idempotencyKey,
      fingerprint: { path: operation.path, body },
      reservation: reservationOf(settings, {
        tenantId: principal.tenantId,
        requestId: request.id,
        feature,
        estimateMicros,
        maxQueued: settings.plan?.maxQueued ?? ports.defaults.maxQueued,
      }),
    },
    reply,
  );
  span?.addEvent(EVENT_ADMITTED, {
    [ATTR_GATEWAY_ADMISSION]: admission.action,
    [ATTR_GATEWAY_QUEUED]: admission.action === 'run' ? admission.queued : undefined,
  });
  auditPii(ports.audit, request, settings.pii.mode, pii.categories);
  if (admission.action === 'relay') {
    reply.header('idempotent-replayed', 'true');
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
  const job = buildJob(request.id, principal, { operation: operation.name, ...operation.web.jobPayload(pii.body, plan) }, plan, {
    feature,
    piiFlags: pii.categories,
    idempotencyKey: taken.claimKey,
    budgetKeys: taken.budgetKeys,
    traceContext: span ? carrierOf(span) : undefined,
  });
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
