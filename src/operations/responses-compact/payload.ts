/** What a compaction job carries besides the fields every job has. */
import { Type, type Static } from '@sinclair/typebox';
import { ResponsesCompactRequestSchema } from '../../wire/openai-responses-compact.ts';
import type { JobCommon } from '../../infra/queue/job.ts';

/** The request as the client sent it (PII masked), without model; translated to the summary call in the worker. */
export const CompactPayloadSchema = Type.Object({
  body: Type.Omit(ResponsesCompactRequestSchema, ['model']),
});

/** What the web half puts in the job. */
export type CompactPayload = Static<typeof CompactPayloadSchema>;

/** The job of a compaction. */
export type CompactJob = JobCommon & CompactPayload;
