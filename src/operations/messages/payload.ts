/** What a Messages job carries besides the fields every job has. */
import { Type, type Static } from '@sinclair/typebox';
import { MessagesRequestSchema } from '../../wire/anthropic-messages.ts';
import type { JobCommon } from '../../infra/queue/job.ts';

/**
 * The request as the client sent it (PII masked), without model and stream, and its
 * `anthropic-beta` flags; translated to chat in the worker for a chat upstream.
 */
export const MessagesPayloadSchema = Type.Object({
  body: Type.Omit(MessagesRequestSchema, ['model', 'stream']),
  betas: Type.Array(Type.String()),
});

/** What the web half puts in the job. */
export type MessagesPayload = Static<typeof MessagesPayloadSchema>;

/** The job of a Messages request. */
export type MessagesJob = JobCommon & MessagesPayload;
