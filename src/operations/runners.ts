/** Every operation's worker half, by name: the job's `operation` picks one. */
import type { JobOf, OperationName } from '../infra/queue/completion-job.ts';
import type { OperationRunner } from './runner.ts';
import { chatRunner } from './chat/run.ts';
import { embeddingsRunner } from './embeddings/run.ts';
import { messagesRunner } from './messages/run.ts';
import { responsesRunner } from './responses/run.ts';

/** A mapped type, so that an operation without a runner does not compile. */
export const RUNNERS: { [N in OperationName]: OperationRunner<JobOf<N>> } = {
  chat: chatRunner,
  embeddings: embeddingsRunner,
  messages: messagesRunner,
  responses: responsesRunner,
};
