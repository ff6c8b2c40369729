/** What a chat completion's job carries besides the fields every job has. */
import { Type, type Static } from '@sinclair/typebox';
import { ChatRequestSchema } from '../../wire/openai-chat.ts';
import type { JobCommon } from '../../infra/queue/job.ts';

/** The OpenAI chat request to forward, without model/stream/stream_options. */
export const ChatPayloadSchema = Type.Object({
  body: ChatRequestSchema,
  /** The client asked for `stream_options.include_usage`. */
  includeUsage: Type.Boolean(),
});

/** What the web half puts in the job. */
export type ChatPayload = Static<typeof ChatPayloadSchema>;

/** The job of a chat completion. */
export type ChatJob = JobCommon & ChatPayload;
