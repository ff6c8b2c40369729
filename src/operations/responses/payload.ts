/** What a Responses job carries besides the fields every job has. */
import { Type, type Static } from '@sinclair/typebox';
import { ResponsesRequestSchema } from '../../wire/openai-responses.ts';
import type { JobCommon } from '../../infra/queue/job.ts';

/** The request as the client sent it (PII masked), without model and stream; translated to chat in the worker. */
export const ResponsesPayloadSchema = Type.Object({
  body: Type.Omit(ResponsesRequestSchema, ['model', 'stream']),
});

/** What the web half puts in the job. */
export type ResponsesPayload = Static<typeof ResponsesPayloadSchema>;

/** The job of a Responses request. */
export type ResponsesJob = JobCommon & ResponsesPayload;
