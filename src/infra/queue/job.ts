import { Type, type Static } from '@sinclair/typebox';
import { TraceCarrierSchema } from '../tracing/trace-carrier.ts';

/** What the web tier hands a worker for one request, whatever its operation. */
export const JobCommonSchema = Type.Object({
  requestId: Type.String(),
  tenantId: Type.String(),
  keyId: Type.String(),
  /** The web process's reply channel: the worker publishes this request's events there. */
  replyChannel: Type.String(),
  /** The alias the client asked for (a model or a tier). */
  requestedModel: Type.String(),
  /** Catalog aliases to try in order; the first that answers is the `model` of the response. */
  candidates: Type.Array(Type.String(), { minItems: 1 }),
  stream: Type.Boolean(),
  /** Prompt tokens when the web tier had to count them; the worker counts them itself otherwise. */
  promptTokens: Type.Optional(Type.Integer({ minimum: 0 })),
  enqueuedAt: Type.Number(),
  /** The `X-Feature` of the request, for usage and budgets. */
  feature: Type.Union([Type.String(), Type.Null()]),
  /** The named prompt version the messages came from. */
  prompt: Type.Union([Type.Object({ name: Type.String(), version: Type.Integer() }), Type.Null()]),
  /** PII categories found and let through (policy `flag`). */
  piiFlags: Type.Array(Type.String()),
  /** The Redis key of the request's idempotency claim: completed or released by the worker; its events then live 24 h. */
  idempotencyKey: Type.Union([Type.String(), Type.Null()]),
  /** The budget reservation's keys, which settlement needs (one tenant's slot). */
  budgetKeys: Type.Array(Type.String()),
  /**
   * The W3C trace context of the request's web span, when the web process traces: the worker's
   * spans continue its trace. Per request, since a job may carry several; absent in older jobs.
   */
  traceContext: Type.Optional(TraceCarrierSchema),
  /** The id of the Response object a Responses request makes (`resp_…`), which its usage record carries. */
  responseId: Type.Optional(Type.String()),
  /**
   * A request its client does not wait for (a background response): a worker that has not started
   * it by `deadlineAt` (ms) ends it failed; its state in Redis says queued, running or ended.
   */
  background: Type.Optional(Type.Object({ deadlineAt: Type.Number() })),
  /** A line of a batch (src/worker/batches/): its result goes to the batch, its usage record names both. */
  batch: Type.Optional(Type.Object({ id: Type.String(), line: Type.Integer({ minimum: 0 }), customId: Type.String() })),
  /**
   * Where the web decided a successful answer goes in the tenant's response cache (src/infra/cache/):
   * its digest, its lifetime and the tenant's cap. The worker stores it once the client has it.
   */
  cache: Type.Optional(Type.Object({ digest: Type.String(), ttlMs: Type.Integer({ minimum: 1 }), maxBytes: Type.Integer({ minimum: 1 }) })),
});

/** The fields every request's job carries. */
export type JobCommon = Static<typeof JobCommonSchema>;

/**
 * What differs by operation: the job's kind in `operation`, which picks the operation that runs
 * it, beside the fields that operation reads (src/operations/index.ts types each kind's).
 */
export interface JobPayloadBase {
  operation: string;
}

/**
 * Data of a BullMQ job: one or more requests of one queue shard. BullMQ's add, fetch and
 * finish cost Redis far more per job than the gateway's own steps per request, so under load the
 * web tier sends the requests that arrive together as one job (src/infra/queue/job-batcher.ts).
 */
export interface JobBatch<Job extends JobCommon = JobCommon> {
  requests: Job[];
}
