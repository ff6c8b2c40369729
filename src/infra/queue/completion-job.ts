import { Type, type Static } from '@sinclair/typebox';
import { ChatRequestSchema } from '../../wire/openai-chat.ts';
import { EmbeddingsRequestSchema } from '../../wire/openai-embeddings.ts';
import { MessagesRequestSchema } from '../../wire/anthropic-messages.ts';
import { ResponsesRequestSchema } from '../../wire/openai-responses.ts';
import { TraceCarrierSchema } from '../tracing/trace-carrier.ts';

/** What the web tier hands a worker for one request, whatever its operation. */
const JobCommonSchema = Type.Object({
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
});

/** A chat completion: the OpenAI chat request to forward, without model/stream/stream_options. */
const ChatPayloadSchema = Type.Object({
  operation: Type.Literal('chat'),
  body: ChatRequestSchema,
  /** The client asked for `stream_options.include_usage`. */
  includeUsage: Type.Boolean(),
});

/** Embeddings: the OpenAI embeddings request to forward, without model. */
const EmbeddingsPayloadSchema = Type.Object({
  operation: Type.Literal('embeddings'),
  body: EmbeddingsRequestSchema,
});

/**
 * Anthropic's Messages API: the request as the client sent it (PII masked), without model and
 * stream, and its `anthropic-beta` flags; translated to chat in the worker for a chat upstream.
 */
const MessagesPayloadSchema = Type.Object({
  operation: Type.Literal('messages'),
  body: Type.Omit(MessagesRequestSchema, ['model', 'stream']),
  betas: Type.Array(Type.String()),
});

/** The Responses API: the request as the client sent it (PII masked), without model and stream; translated to chat in the worker. */
const ResponsesPayloadSchema = Type.Object({
  operation: Type.Literal('responses'),
  body: Type.Omit(ResponsesRequestSchema, ['model', 'stream']),
});

/**
 * What differs by operation: its name, which picks the worker's run function
 * (src/operations/runners.ts), and the body in the client's own dialect.
 */
export const JobPayloadSchema = Type.Union([ChatPayloadSchema, EmbeddingsPayloadSchema, MessagesPayloadSchema, ResponsesPayloadSchema]);

/** The operation-specific part of a job. */
export type JobPayload = Static<typeof JobPayloadSchema>;

/** The operations a job can carry. */
export type OperationName = JobPayload['operation'];

/** Data of one request's job. */
export type CompletionJob = Static<typeof JobCommonSchema> & JobPayload;

/** The job of one operation. */
export type JobOf<N extends OperationName> = Extract<CompletionJob, { operation: N }>;

/**
 * Data of a BullMQ job: one or more requests of one queue shard. BullMQ's add, fetch and
 * finish cost Redis far more per job than the gateway's own steps per request, so under load the
 * web tier sends the requests that arrive together as one job (src/infra/queue/job-batcher.ts).
 */
export interface CompletionBatch {
  requests: CompletionJob[];
}
