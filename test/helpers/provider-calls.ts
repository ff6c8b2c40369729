/** Small helpers for tests that call provider adapters directly. */
import { isUpstreamError, type UpstreamError } from '../../src/providers/shared/upstream-error.ts';
import type { ChatCompletionChunk } from '../../src/providers/types.ts';

/** Reads a stream to its end into `seen` (kept when the stream throws, so tests can look at what came first). */
export async function collect(stream: AsyncIterable<ChatCompletionChunk>, seen: ChatCompletionChunk[] = []): Promise<ChatCompletionChunk[]> {
  for await (const chunk of stream) seen.push(chunk);
  return seen;
}

/** The UpstreamError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error: unknown = await promise.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  if (!isUpstreamError(error)) throw error;
  return error;
}
