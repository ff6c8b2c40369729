import { Type, type Static } from '@sinclair/typebox';
import { ChatRequestSchema } from '../wire/openai-chat.ts';

/** What the web tier hands a worker for one completion. */
export const CompletionJobSchema = Type.Object({
  requestId: Type.String(),
  tenantId: Type.String(),
  keyId: Type.String(),
  /** The web process's reply channel: the worker publishes this request's events there. */
  replyChannel: Type.String(),
  /** The alias the client asked for (a model or a tier). */
  requestedModel: Type.String(),
  /** Catalog aliases to try in order; the first that answers is the `model` of the response. */
  candidates: Type.Array(Type.String(), { minItems: 1 }),
  /** The OpenAI chat request to forward, without model/stream/stream_options. */
  body: ChatRequestSchema,
  stream: Type.Boolean(),
  /** The client asked for `stream_options.include_usage`. */
  includeUsage: Type.Boolean(),
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
});

/** Data of a completion job. */
export type CompletionJob = Static<typeof CompletionJobSchema>;

/**
 * What one BullMQ job carries: one or more requests of one queue shard. BullMQ's add, fetch and
 * finish cost Redis far more per job than the gateway's own steps per request, so under load the
 * web tier sends the requests that arrive together as one job (src/chat/job-batcher.ts).
 */
export const CompletionBatchSchema = Type.Object({
  requests: Type.Array(CompletionJobSchema, { minItems: 1 }),
});

/** Data of a completion batch job. */
export type CompletionBatch = Static<typeof CompletionBatchSchema>;
