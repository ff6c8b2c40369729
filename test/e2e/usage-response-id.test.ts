/**
 * The usage record names the Response a Responses request made: from the job through the outbox into
 * the store and out of GET /v1/usage as `response_id`; null for every other request and for records an
 * older gateway queued without it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { requestIdOf, usageRecordOf } from '../helpers/sdk-calls.ts';
import { encodeOutboxRecord } from '../../src/infra/outbox/outbox.ts';
import type { UsageRecord } from '../../src/infra/store/repository.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let secret: string;
let client: OpenAI;

/** A whole usage record of tenant acme, as a worker queues it. */
function record(requestId: string, responseId: string | null): UsageRecord {
  return {
    requestId,
    tenantId: 'acme',
    keyId: 'key_worker',
    feature: null,
    operation: 'responses',
    requestedModel: 'fake-gpt',
    model: 'fake-gpt',
    provider: 'openai-compatible',
    upstreamModel: 'gpt-4o-mini',
    promptName: null,
    promptVersion: null,
    promptTokens: 3,
    completionTokens: 5,
    totalTokens: 8,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    usageSource: 'provider',
    costMicros: 13,
    status: 'succeeded',
    errorCode: null,
    queueWaitMs: 1,
    ttftMs: null,
    latencyMs: 30,
    stream: false,
    piiFlags: [],
    responseId,
    batchId: null,
    customId: null,
    deployment: null,
    cacheHit: false,
    createdAt: new Date(),
  };
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url) });
  secret = (await gateway.issueKey('acme', 'developer')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('the response id of a usage record', () => {
  it('goes from the outbox into the store and out of GET /v1/usage; a record queued without it reads null', async () => {
    const outbox = gateway.keys.outboxItems(gateway.keys.shardOf('acme'));
    const current = record('req_with_response_id', 'resp_req_with_response_id');
    // As an older gateway queued it: no responseId at all (nor the token details).
    const { responseId: _none, cachedTokens: _c, cacheWriteTokens: _w, reasoningTokens: _r, ...older } = record('req_queued_by_older_gateway', null);
    await gateway.redis.lpush(outbox, encodeOutboxRecord({ kind: 'usage', record: current }));
    await gateway.redis.lpush(outbox, encodeOutboxRecord({ kind: 'usage', record: older as unknown as UsageRecord }));
    expect(await usageRecordOf(gateway, secret, current.requestId)).toMatchObject({ request_id: current.requestId, response_id: 'resp_req_with_response_id' });
    expect(await usageRecordOf(gateway, secret, 'req_queued_by_older_gateway')).toMatchObject({ response_id: null, reasoning_tokens: 0 });
    expect(
      (await gateway.repository.usage.list({ tenantId: 'acme', since: new Date(0), until: new Date(Date.now() + 86_400_000) }, 100, null)).map((r) => [
        r.requestId,
        r.responseId,
      ]),
    ).toEqual(
      expect.arrayContaining([
        ['req_with_response_id', 'resp_req_with_response_id'],
        ['req_queued_by_older_gateway', null],
      ]),
    );
  });

  it('is the Response of a Responses request, set by the worker from the job', async () => {
    const { data, response } = await client.responses.create({ model: 'fake-gpt', input: 'Say hello' }).withResponse();
    const usage = await usageRecordOf(gateway, secret, response.headers.get('x-request-id') ?? '');
    expect(usage).toMatchObject({ operation: 'responses', response_id: data.id });
    expect(data.id).toMatch(/^resp_/);
  });

  it('is null for a request of another operation', async () => {
    const completion = await client.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'hi' }] });
    expect(await usageRecordOf(gateway, secret, requestIdOf(completion))).toMatchObject({ operation: 'chat', response_id: null });
  });
});
