/** Small helpers for tests that call provider adapters directly. */
import { isUpstreamError, type UpstreamError } from '../../src/providers/shared/upstream-error.ts';
import type { ChatCompletionChunk } from '../../src/wire/openai-chat.ts';
import type { CatalogModel } from '../../src/domain/catalog/schema.ts';
import type { ProviderTarget } from '../../src/providers/types.ts';
import type { UpstreamHttp } from '../../src/providers/shared/http.ts';
import { expect } from 'vitest';
import type { BehaviourBase, FakeServer } from './fake-server.ts';

/** Reads a stream to its end into `seen` (kept when the stream throws, so tests can look at what came first). */
export async function collect<T = ChatCompletionChunk>(stream: AsyncIterable<T>, seen: T[] = []): Promise<T[]> {
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

/** The target a worker would build for a catalog entry (as src/domain/catalog/targets.ts does), with the given key. */
export function targetFor<M extends CatalogModel>(model: M, apiKey: string | null = null, alias = 'test-model'): ProviderTarget<M> {
  return { alias, deployment: alias, provider: model.provider, upstreamModel: model.upstream_model, model, apiKey };
}

/** A catalog entry's common fields, for tests that build entries of any provider. */
export const MODEL_BASICS = { context_window: 8192, max_output_tokens: 1024, input_price_per_mtok: 1, output_price_per_mtok: 2 } as const;

/** Kept-alive connections to `origin` the pool holds free (undici's pool stats). */
function idleConnections(http: UpstreamHttp, origin: string): number {
  const stats = (http.dispatcher as unknown as { stats: Record<string, { free: number }> }).stats;
  return stats[origin]?.free ?? 0;
}

/**
 * Reads three streams one after another and counts the connections the fake saw them on: one when
 * each body was read to its end and its connection went back to the pool, three when each was destroyed.
 */
export async function connectionsOfThreeStreams(stream: () => AsyncIterable<unknown>, http: UpstreamHttp, fake: FakeServer<BehaviourBase>): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await collect(stream());
    // The pool takes the connection back once undici has seen the response end, a moment after the body's last byte.
    await expect.poll(() => idleConnections(http, fake.origin)).toBeGreaterThan(0);
  }
  return new Set(fake.requests.map((request) => request.clientPort)).size;
}
