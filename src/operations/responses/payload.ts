/** What a Responses job carries besides the fields every job has. */
import { Type, type Static } from '@sinclair/typebox';
import { ResponsesRequestSchema } from '../../wire/openai-responses.ts';
import type { JobCommon } from '../../infra/queue/job.ts';

/**
 * The request as the client sent it (PII masked), without model and stream, its conversation made
 * whole (src/operations/responses/conversation.ts); translated to chat in the worker.
 */
export const ResponsesPayloadSchema = Type.Object({
  body: Type.Omit(ResponsesRequestSchema, ['model', 'stream']),
  /** The response is stored (absent in jobs of gateways that stored none). */
  store: Type.Optional(Type.Boolean()),
  /** How many of the input's first items are earlier turns' (`previous_response_id`), not the request's own. */
  contextItems: Type.Optional(Type.Integer({ minimum: 0 })),
});

/** What the web half puts in the job. */
export type ResponsesPayload = Static<typeof ResponsesPayloadSchema>;

/** The job of a Responses request. */
export type ResponsesJob = JobCommon & ResponsesPayload;
