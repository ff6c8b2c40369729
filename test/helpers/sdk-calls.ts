/** What the end-to-end suites do with the openai SDK's answers: read a stream whole, catch its error, find a request's usage record. */
import { readdirSync } from 'node:fs';
import { expect } from 'vitest';
import { APIError } from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { GatewayUnderTest } from './gateway-processes.ts';
import { call, eventually } from './http.ts';

/** Every chunk of a stream, in order. */
export async function drain(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** The APIError a call ends with; fails the test when it succeeds or throws anything else. */
export async function apiFailure(request: Promise<unknown>): Promise<APIError> {
  const error = await request.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

/** The request id the gateway puts in every completion. */
export function requestIdOf(completion: object): string {
  return (completion as { request_id: string }).request_id;
}

/** A request's usage record from GET /v1/usage (the worker writes it through the outbox, so it may take a moment). */
export async function usageRecordOf(gateway: GatewayUnderTest, secret: string, requestId: string): Promise<Record<string, unknown>> {
  const today = new Date().toISOString().slice(0, 10);
  let found: Record<string, unknown> | undefined;
  await eventually(
    async () => {
      const page = await call(gateway.origin, secret, 'GET', `/v1/usage?since=${today}&limit=1000`);
      found = (page.body.data as Array<Record<string, unknown>>).find((record) => record.request_id === requestId);
      return found !== undefined;
    },
    5000,
    `the usage record of ${requestId}`,
  );
  return found as Record<string, unknown>;
}

/** The fixture names of a folder: its files ending in `suffix`, without it, sorted. */
export function fixtureNames(folder: URL | string, suffix: string): string[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith(suffix))
    .map((file) => file.slice(0, -suffix.length))
    .sort();
}
