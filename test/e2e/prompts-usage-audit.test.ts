/** Named prompts, usage records and the audit log, end to end: web and worker processes, real stores, the openai SDK. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI, { type APIError } from 'openai';
import pg from 'pg';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually } from '../helpers/http.ts';

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
const keys: Record<string, string> = {};
let revokedKeyId: string;
const today = new Date().toISOString().slice(0, 10);

function sdk(secret: string): OpenAI {
  return new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
}

// The SDK's types require model and messages; a named-prompt request sends neither.
function promptRequest(prompt: string, variables: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { prompt, variables, ...extra } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
}

async function createVersion(name: string, content: string, extra: Record<string, unknown> = {}) {
  return call(gateway.origin, keys.adminA as string, 'POST', `/internal/v1/prompts/${name}/versions`, {
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content },
    ],
    model: 'fake-gpt',
    parameters: { temperature: 0.3, max_tokens: 50 },
    ...extra,
  });
}

async function usageOf(secret: string, query = `since=${today}`) {
  return call(gateway.origin, secret, 'GET', `/v1/usage?${query}`);
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { KEY_CACHE_TTL_MS: '200' }, webs: 2 });
  for (const [name, tenant, role] of [
    ['adminA', 'tenant-a', 'admin'],
    ['appA', 'tenant-a', 'app'],
    ['devA', 'tenant-a', 'developer'],
    ['auditorA', 'tenant-a', 'auditor'],
    ['adminB', 'tenant-b', 'admin'],
    ['devB', 'tenant-b', 'developer'],
    ['revokedA', 'tenant-a', 'app'],
  ] as const) {
    const key = await gateway.issueKey(tenant, role);
    keys[name] = key.secret;
    if (name === 'revokedA') revokedKeyId = key.id;
  }
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => upstream.reset());

describe('named prompts', () => {
  beforeAll(async () => {
    const created = await createVersion('greet', 'Hello {{name}}, tell me about {{ topic }}.');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'greet', version: 1, active: true, variables: ['name', 'topic'] });
  });

  it('completes with the active version: variables substituted, registered model and parameters applied', async () => {
    const data = await sdk(keys.appA as string).chat.completions.create(promptRequest('greet', { name: 'Ada', topic: 'queues', unused: 'ignored' }));
    expect(data.model).toBe('fake-gpt');
    expect(upstream.requests[0]?.body).toMatchObject({
      model: 'fake-upstream-model',
      temperature: 0.3,
      max_tokens: 50,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hello Ada, tell me about queues.' },
      ],
    });
  });

  it('streams a named prompt', async () => {
    const stream = await sdk(keys.appA as string).chat.completions.create({
      ...promptRequest('greet', { name: 'Bo', topic: 'streams' }),
      stream: true,
    } as unknown as OpenAI.ChatCompletionCreateParamsStreaming);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello from the fake upstream.');
    expect(upstream.requests[0]?.body).toMatchObject({ stream: true, messages: [{}, { content: 'Hello Bo, tell me about streams.' }] });
  });

  it('names a missing variable, rejects a non-string one, and explains a prompt sent with a model', async () => {
    const client = sdk(keys.appA as string);
    const missing = await client.chat.completions.create(promptRequest('greet', { name: 'Ada' })).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 400, code: 'missing_required_field', param: 'variables.topic' });
    const wrongType = await client.chat.completions.create(promptRequest('greet', { name: 'Ada', topic: 7 })).catch((e: unknown) => e);
    expect(wrongType).toMatchObject({ status: 400, code: 'invalid_value', param: 'variables.topic' });
    const mixed = await client.chat.completions.create(promptRequest('greet', { name: 'Ada', topic: 'x' }, { model: 'fake-gpt' })).catch((e: unknown) => e);
    expect(mixed).toMatchObject({ status: 400, param: 'model' });
    expect((mixed as Error).message).toMatch(/cannot be sent with 'prompt'/);
    const unknown = await client.chat.completions.create(promptRequest('nope', {})).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ status: 404, code: 'prompt_not_found' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('GET /v1/prompts/{name} returns the active version', async () => {
    const response = await call(gateway.origin, keys.devA as string, 'GET', '/v1/prompts/greet');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: 'greet',
      version: 1,
      model: 'fake-gpt',
      parameters: { temperature: 0.3, max_tokens: 50 },
      variables: ['name', 'topic'],
    });
    expect(response.body.messages[1].content).toBe('Hello {{name}}, tell me about {{ topic }}.');
  });

  it('rolls back to an older version while requests run; every web process switches within a second', async () => {
    expect((await createVersion('switch', 'version one says {{x}}')).status).toBe(201);
    const second = await createVersion('switch', 'version two says {{x}}', { activate: true });
    expect(second.body).toMatchObject({ version: 2, active: true });
    // The second web process caches version 2 before the rollback, so only the invalidation can move it.
    const other = new OpenAI({ baseURL: gateway.webs[1]?.baseURL, apiKey: keys.appA as string, maxRetries: 0 });
    await other.chat.completions.create(promptRequest('switch', { x: 'before' }));
    expect(upstream.requests.at(-1)?.body).toMatchObject({ messages: [{}, { content: 'version two says before' }] });
    const client = sdk(keys.appA as string);
    const running = Array.from({ length: 20 }, (_, i) => client.chat.completions.create(promptRequest('switch', { x: String(i) })));
    const rollback = await call(gateway.origin, keys.adminA as string, 'POST', '/internal/v1/prompts/switch/activate', { version: 1 });
    expect(rollback.status).toBe(200);
    expect((await Promise.allSettled(running)).every((r) => r.status === 'fulfilled')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    upstream.reset();
    await client.chat.completions.create(promptRequest('switch', { x: 'after' }));
    await other.chat.completions.create(promptRequest('switch', { x: 'after' }));
    expect(upstream.requests.map((r) => (r.body as { messages: Array<{ content: string }> }).messages[1]?.content)).toEqual([
      'version one says after',
      'version one says after',
    ]);
    const versions = await call(gateway.origin, keys.adminA as string, 'GET', '/internal/v1/prompts/switch/versions');
    expect(versions.body).toMatchObject({
      active_version: 1,
      data: [
        { version: 2, active: false },
        { version: 1, active: true },
      ],
    });
  });

  it('only admins manage prompts; unknown versions are 404', async () => {
    expect((await call(gateway.origin, keys.devA as string, 'POST', '/internal/v1/prompts/greet/activate', { version: 1 })).status).toBe(403);
    const missing = await call(gateway.origin, keys.adminA as string, 'POST', '/internal/v1/prompts/greet/activate', { version: 99 });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'prompt_not_found' });
    const badModel = await call(gateway.origin, keys.adminA as string, 'POST', '/internal/v1/prompts/x/versions', {
      messages: [{ role: 'user', content: 'hi' }],
      model: 'no-such-model',
    });
    expect(badModel.body.error).toMatchObject({ code: 'model_not_found' });
  });
});

describe('usage records', () => {
  it('records every request once, with totals equal to the sum of the responses', async () => {
    const client = sdk(keys.appA as string);
    const feature = { headers: { 'X-Feature': 'search' } };
    const responses = await Promise.all(
      Array.from({ length: 6 }, () =>
        client.chat.completions.create({ model: 'svc-flash', messages: [{ role: 'user', content: 'count my tokens please' }] }, feature),
      ),
    );
    const expected = responses.reduce((sum, r) => sum + (r.usage?.total_tokens ?? 0), 0);
    const ids = new Set(responses.map((r) => (r as unknown as { request_id: string }).request_id));
    await eventually(async () => (await usageOf(keys.devA as string, `since=${today}&feature=search`)).body.data.length === 6, 5000, 'six usage records');
    const page = await usageOf(keys.devA as string, `since=${today}&feature=search`);
    expect(new Set(page.body.data.map((r: { request_id: string }) => r.request_id))).toEqual(ids);
    expect(page.body.data.reduce((sum: number, r: { total_tokens: number }) => sum + r.total_tokens, 0)).toBe(expected);
    expect(page.body.data[0]).toMatchObject({
      model: 'fake-gpt',
      requested_model: 'svc-flash',
      provider: 'openai-compatible',
      feature: 'search',
      status: 'succeeded',
      usage_source: 'provider',
      stream: false,
    });
    expect(page.body.data[0].cost_micros).toBe(page.body.data[0].prompt_tokens * 1 + page.body.data[0].completion_tokens * 2);
    const byModel = await usageOf(keys.devA as string, `since=${today}&feature=search&group_by=model`);
    expect(byModel.body.data).toEqual([expect.objectContaining({ model: 'fake-gpt', requests: 6, total_tokens: expected })]);
  });

  it('names the prompt version on the record, and records failures', async () => {
    upstream.script([{ kind: 'status', status: 400 }]);
    const failed = await sdk(keys.appA as string)
      .chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    const failedId = (failed as APIError).requestID;
    await eventually(
      async () => (await usageOf(keys.devA as string)).body.data.some((r: { request_id: string }) => r.request_id === failedId),
      5000,
      "the failed request's record",
    );
    const records = (await usageOf(keys.devA as string, `since=${today}&limit=1000`)).body.data;
    expect(records.find((r: { request_id: string }) => r.request_id === failedId)).toMatchObject({
      status: 'failed',
      error_code: 'provider_invalid_request',
      total_tokens: 0,
      cost_micros: 0,
    });
    expect(records.some((r: { prompt_name: string; prompt_version: number }) => r.prompt_name === 'greet' && r.prompt_version === 1)).toBe(true);
  });

  it('pages with a cursor, newest first, each record exactly once', async () => {
    const all = (await usageOf(keys.devA as string, `since=${today}&limit=1000`)).body.data;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: Array<{ request_id: string }>; next_cursor: string | null } } = await usageOf(
        keys.devA as string,
        `since=${today}&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.body.data.map((r) => r.request_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((r: { request_id: string }) => r.request_id));
    const times = all.map((r: { created_at: string }) => r.created_at);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('rejects a bad date with its param', async () => {
    const bad = await usageOf(keys.devA as string, 'since=2026-02-30');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_value', param: 'since' });
    expect((await usageOf(keys.devA as string, '')).body.error).toMatchObject({ code: 'missing_required_field', param: 'since' });
  });
});

describe('tenant isolation', () => {
  it('tenant B sees nothing of tenant A on any endpoint', async () => {
    expect((await call(gateway.origin, keys.devB as string, 'GET', '/v1/prompts/greet')).status).toBe(404);
    expect((await usageOf(keys.devB as string)).body.data).toEqual([]);
    expect(
      (await call(gateway.origin, keys.adminB as string, 'GET', '/v1/audit')).body.data.every(
        (e: { details: unknown; target: string }) => !String(e.target).includes('greet'),
      ),
    ).toBe(true);
    expect((await call(gateway.origin, keys.adminB as string, 'POST', '/internal/v1/prompts/greet/activate', { version: 1 })).status).toBe(404);
    expect((await call(gateway.origin, keys.adminB as string, 'GET', '/internal/v1/prompts/greet/versions')).status).toBe(404);
    const viaPrompt = await sdk(keys.devB as string)
      .chat.completions.create(promptRequest('greet', { name: 'x', topic: 'y' }))
      .catch((e: unknown) => e);
    expect(viaPrompt).toMatchObject({ status: 404, code: 'prompt_not_found' });
  });
});

describe('audit log', () => {
  it('records administrative changes and denied access, readable by admins and auditors only', async () => {
    await gateway.repository.apiKeys.revoke(revokedKeyId);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await call(gateway.origin, keys.revokedA as string, 'GET', '/v1/usage?since=' + today)).status).toBe(401);
    expect((await call(gateway.origin, keys.auditorA as string, 'POST', '/v1/chat/completions', { model: 'fake-gpt', messages: [] })).status).toBe(403);
    await eventually(
      async () => (await call(gateway.origin, keys.auditorA as string, 'GET', '/v1/audit?action=auth.denied')).body.data.length >= 2,
      5000,
      'denials audited',
    );
    const denied = (await call(gateway.origin, keys.auditorA as string, 'GET', '/v1/audit?action=auth.denied')).body.data;
    expect(denied.map((e: { actor: string }) => e.actor)).toContain(revokedKeyId);
    const changes = (await call(gateway.origin, keys.adminA as string, 'GET', `/v1/audit?since=${today}&limit=1000`)).body.data.map(
      (e: { action: string }) => e.action,
    );
    expect(changes).toEqual(expect.arrayContaining(['prompt.version_created', 'prompt.activated', 'auth.denied']));
    expect((await call(gateway.origin, keys.appA as string, 'GET', '/v1/audit')).status).toBe(403);
  });

  it('verifies the chain, and names the first broken link after an event is edited', async () => {
    const intact = await call(gateway.origin, keys.auditorA as string, 'GET', '/internal/v1/audit/verify');
    expect(intact.body).toMatchObject({ ok: true });
    expect(intact.body.events).toBeGreaterThanOrEqual(4);
    const client = new pg.Client({ connectionString: gateway.databaseUrl });
    await client.connect();
    await client.query("UPDATE audit_events SET action = 'tampered' WHERE tenant_id = 'tenant-a' AND seq = 2");
    await client.end();
    const broken = await call(gateway.origin, keys.auditorA as string, 'GET', '/internal/v1/audit/verify');
    expect(broken.body).toMatchObject({ ok: false, broken_at: { seq: 2 } });
  });
});
