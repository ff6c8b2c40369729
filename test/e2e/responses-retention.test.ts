/**
 * What is kept, and for how long: a background response with `store: false` can be polled for
 * BACKGROUND_RESULT_TTL_S after it ends, then is gone from Redis and the store; a stored response
 * goes once it is older than its tenant's retention_days (the worker's sweep). The openai SDK
 * against web and worker processes, with a short polling window and sweep interval.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import pg from 'pg';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { call, eventually } from '../helpers/http.ts';
import { apiFailure } from '../helpers/sdk-calls.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: { BACKGROUND_RESULT_TTL_S: '1', RESPONSES_REAP_INTERVAL_MS: '300', SETTINGS_CACHE_TTL_MS: '100' },
  });
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('retention', () => {
  it('a background response with store: false is polled for BACKGROUND_RESULT_TTL_S after it ends, then removed', async () => {
    const accepted = await client.responses.create({ model: 'sim', input: 'Not to keep', background: true, store: false });
    expect((accepted as unknown as { store: boolean }).store).toBe(false);
    await eventually(async () => (await client.responses.retrieve(accepted.id)).status === 'completed', 10_000, 'the response to end');
    // Its input was never kept: there is nothing to continue or list.
    expect((await client.responses.inputItems.list(accepted.id)).data).toEqual([]);
    await eventually(async () => (await apiFailure(client.responses.retrieve(accepted.id)).catch(() => null))?.status === 404, 10_000, 'the response to go');
    expect(await gateway.repository.responses.get('acme', accepted.id)).toBeNull();
  });

  it("a stored response goes once it is older than its tenant's retention_days", async () => {
    const admin = (await gateway.issueKey('short', 'admin')).secret;
    expect((await call(gateway.origin, admin, 'PUT', '/internal/v1/data-policy', { store_responses: true, retention_days: 1 })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const short = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('short', 'app')).secret, maxRetries: 0 });
    const old = await short.responses.create({ model: 'sim', input: 'Keep me a day' });
    const fresh = await short.responses.create({ model: 'sim', input: 'Keep me too' });
    await eventually(async () => (await gateway.repository.responses.get('short', fresh.id)) !== null, 5000, 'both in the store');
    await eventually(async () => (await gateway.repository.responses.get('short', old.id)) !== null, 5000, 'both in the store');
    // Two days old, as if it were: the sweep's clock is the store's.
    const db = new pg.Client({ connectionString: gateway.databaseUrl });
    await db.connect();
    await db.query("UPDATE responses SET created_at = now() - interval '2 days' WHERE id = $1", [old.id]);
    await db.end();
    await gateway.redis.del(gateway.keys.response('short', old.id), gateway.keys.response('short', fresh.id));
    await eventually(async () => (await gateway.repository.responses.get('short', old.id)) === null, 5000, 'the old response to be swept');
    expect((await apiFailure(short.responses.retrieve(old.id))).status).toBe(404);
    expect((await short.responses.retrieve(fresh.id)).id).toBe(fresh.id);
  });
});
