/** What an embeddings job carries besides the fields every job has. */
import { Type, type Static } from '@sinclair/typebox';
import { EmbeddingsRequestSchema } from '../../wire/openai-embeddings.ts';
import type { JobCommon } from '../../infra/queue/job.ts';

/** The OpenAI embeddings request to forward, without model. */
export const EmbeddingsPayloadSchema = Type.Object({
  body: EmbeddingsRequestSchema,
});

/** What the web half puts in the job. */
export type EmbeddingsPayload = Static<typeof EmbeddingsPayloadSchema>;

/** The job of an embeddings request. */
export type EmbeddingsJob = JobCommon & EmbeddingsPayload;
