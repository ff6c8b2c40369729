/**
 * The asynchronous half of the Responses API with the official `openai` SDK against web and worker
 * processes: background responses polled, streamed, resumed after a dropped connection and
 * cancelled (queued and running); stored responses retrieved, continued with previous_response_id
 * over a tool loop, referred to by item_reference, listed by input item, deleted; a tenant whose
 * data policy stores nothing; and the usage record's response id.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { call, eventually } from '../helpers/http.ts';
import { apiFailure, usageRecordOf } from '../helpers/sdk-calls.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { startWebhookReceiver, unwrap, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

let upstream: FakeUpstream;
let hook: WebhookReceiver;
let gateway: GatewayUnderTest;
let client: OpenAI;
let adminSecret: string;

beforeAll(async () => {
  [upstream, hook] = await Promise.all([startFakeUpstream(), startWebhookReceiver()]);
  // One request at a time, a job each: a request held at the upstream keeps the next one queued.
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: { WORKER_CONCURRENCY: '1', QUEUE_BATCH_MAX: '1', RETRY_MAX_ATTEMPTS: '1', SETTINGS_CACHE_TTL_MS: '100', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
  });
  adminSecret = (await gateway.issueKey('acme', 'admin')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([upstream?.close(), hook?.close()]);
});

beforeEach(() => upstream.reset());

/** Polls until the response is no longer queued or running. */
async function settled(id: string, timeoutMs = 10_000): Promise<Response> {
  let response: Response | undefined;
  await eventually(
    async () => {
      response = await client.responses.retrieve(id);
      return response.status !== 'queued' && response.status !== 'in_progress';
    },
    timeoutMs,
    `${id} to end`,
  );
  return response as Response;
}

async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('background responses', () => {
  it('answers queued at once, then retrieve shows it completed with its output and usage', async () => {
    upstream.script([{ kind: 'ok', text: 'Done in the background.' }]);
    const accepted = await client.responses.create({ model: 'fake-gpt', input: 'Work on this', background: true });
    expect(accepted).toMatchObject({ object: 'response', status: 'queued', background: true, output: [], store: true });
    expect(accepted.id).toMatch(/^resp_req_/);
    const done = await settled(accepted.id);
    expect(done).toMatchObject({ id: accepted.id, status: 'completed', background: true, output_text: 'Done in the background.' });
    expect(done.usage?.total_tokens).toBeGreaterThan(0);
    expect(done.completed_at).toEqual(expect.any(Number));
  });

  it('a refused request is refused at once, as a synchronous one: nothing queued or stored', async () => {
    const error = await apiFailure(client.responses.create({ model: 'no-such-model', input: 'Hi', background: true }));
    expect(error.status).toBe(404);
    expect(error.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('streams from response.queued, and a dropped stream resumes with starting_after: every event once, none missing', async () => {
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 60, chunks: 12 }]);
    const first = await client.responses.create({ model: 'fake-gpt', input: 'Stream it', background: true, stream: true });
    const seen: ResponseStreamEvent[] = [];
    for await (const event of first) {
      seen.push(event);
      if (event.type === 'response.output_text.delta' && seen.length >= 6) break;
    }
    expect(seen[0]).toMatchObject({ type: 'response.queued', sequence_number: 0 });
    const id = (seen[0] as { response: Response }).response.id;
    const last = seen.at(-1)?.sequence_number as number;
    const rest = await collect(await client.responses.retrieve(id, { stream: true, starting_after: last }));
    const numbers = [...seen, ...rest].map((event) => event.sequence_number);
    expect(numbers).toEqual(numbers.map((_, i) => i));
    expect(rest.at(-1)?.type).toBe('response.completed');
    // The work went on without the client: one upstream call, and the whole text.
    expect(upstream.requests).toHaveLength(1);
    const text = [...seen, ...rest].flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
    expect((await client.responses.retrieve(id)).output_text).toBe(text);
    // From the start, response.queued included; after the last event, nothing.
    const replay = await collect(await client.responses.retrieve(id, { stream: true }));
    expect(replay.map((event) => event.sequence_number)).toEqual(numbers);
    expect(await collect(await client.responses.retrieve(id, { stream: true, starting_after: numbers.at(-1) }))).toEqual([]);
  });

  it('cancels a queued response (nothing called, nothing charged) and a running one; a finished one is answered unchanged', async () => {
    upstream.script([{ kind: 'hang' }]);
    const running = await client.responses.create({ model: 'fake-gpt', input: 'Hold the worker', background: true });
    await eventually(async () => upstream.requests.length === 1, 5000, 'the first request to reach the upstream');
    const queued = await client.responses.create({ model: 'fake-gpt', input: 'Wait behind it', background: true });
    expect((await client.responses.retrieve(queued.id)).status).toBe('queued');
    expect(await client.responses.cancel(queued.id)).toMatchObject({ id: queued.id, status: 'cancelled' });
    expect((await client.responses.retrieve(running.id)).status).toBe('in_progress');
    expect(await client.responses.cancel(running.id)).toMatchObject({ id: running.id, status: 'cancelled' });
    await upstream.waitForClose(0);
    expect((await settled(running.id)).status).toBe('cancelled');
    expect((await client.responses.retrieve(queued.id)).status).toBe('cancelled');
    expect(upstream.requests).toHaveLength(1);
    // The store has the end too (through the outbox), once Redis lets it go.
    for (const id of [queued.id, running.id])
      await eventually(async () => (await gateway.repository.responses.get('acme', id))?.status === 'cancelled', 5000, `${id} cancelled in the store`);
    const record = await usageRecordOf(gateway, adminSecret, running.id.slice('resp_'.length));
    expect(record).toMatchObject({ status: 'cancelled', response_id: running.id });
    upstream.script([{ kind: 'ok', text: 'Quick.' }]);
    const quick = await client.responses.create({ model: 'fake-gpt', input: 'Quick', background: true });
    const done = await settled(quick.id);
    expect(await client.responses.cancel(quick.id)).toEqual(done);
  });

  it('a queued stream cancelled ends, for its client and for a resume; a queued response deleted never runs', async () => {
    upstream.script([{ kind: 'hang' }]);
    const holder = await client.responses.create({ model: 'fake-gpt', input: 'Hold the worker', background: true });
    await eventually(async () => upstream.requests.length === 1, 5000, 'the worker to be busy');
    const stream = await client.responses.create({ model: 'fake-gpt', input: 'Stream me later', background: true, stream: true });
    const events: ResponseStreamEvent[] = [];
    const reading = (async () => {
      for await (const event of stream) events.push(event);
    })();
    await eventually(async () => events.length === 1, 5000, 'response.queued');
    const id = (events[0] as { response: Response }).response.id;
    const doomed = await client.responses.create({ model: 'fake-gpt', input: 'Delete me', background: true });
    expect(await client.responses.cancel(id)).toMatchObject({ status: 'cancelled' });
    await reading;
    expect(events.map((event) => event.type)).toEqual(['response.queued']);
    expect(await collect(await client.responses.retrieve(id, { stream: true, starting_after: 0 }))).toEqual([]);
    expect(await client.responses.delete(doomed.id)).toMatchObject({ deleted: true });
    await client.responses.cancel(holder.id);
    await settled(holder.id);
    // The worker is free: the deleted one is never sent, the cancelled one neither.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(upstream.requests).toHaveLength(1);
  });

  it("waits behind its tenant's interactive requests", async () => {
    upstream.script([{ kind: 'hang' }, { kind: 'ok', text: 'interactive' }, { kind: 'ok', text: 'background' }]);
    const holder = await client.responses.create({ model: 'fake-gpt', input: 'Hold the worker', background: true });
    await eventually(async () => upstream.requests.length === 1, 5000, 'the worker to be busy');
    const background = await client.responses.create({ model: 'fake-gpt', input: 'later', background: true });
    const interactive = client.responses.create({ model: 'fake-gpt', input: 'now' });
    // Both jobs are queued behind the busy worker before it is freed.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.responses.cancel(holder.id);
    expect((await interactive).output_text).toBe('interactive');
    expect((await settled(background.id)).output_text).toBe('background');
    const inputs = upstream.requests.map(
      (request) => ((request.body as { messages: Array<{ content: unknown }> }).messages.at(-1) as { content: unknown }).content,
    );
    expect(inputs).toEqual(['Hold the worker', 'now', 'later']);
  });

  it('streaming a response not created in background mode is a 400 naming stream', async () => {
    const plain = await client.responses.create({ model: 'sim', input: 'Hi' });
    const error = await apiFailure(client.responses.retrieve(plain.id, { stream: true }));
    expect([error.status, error.error]).toMatchObject([400, { param: 'stream' }]);
  });

  it('a bad starting_after is a 400 naming it', async () => {
    const accepted = await client.responses.create({ model: 'sim', input: 'Hi', background: true, stream: false });
    for (const value of ['-1', '1.5', 'x']) {
      const response = await call(gateway.origin, adminSecret, 'GET', `/v1/responses/${accepted.id}?stream=true&starting_after=${value}`);
      expect([response.status, response.body.error.param]).toEqual([400, 'starting_after']);
    }
  });
});

describe('stored responses', () => {
  const weather = { type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false };

  it('continues a conversation over three turns with a tool call in between', async () => {
    upstream.script([
      { kind: 'ok', text: 'Hello Ada.' },
      { kind: 'ok', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { kind: 'ok', text: 'It is sunny in Paris.' },
    ]);
    const one = await client.responses.create({ model: 'fake-gpt', input: 'I am Ada.' });
    const two = await client.responses.create({ model: 'fake-gpt', input: 'Weather in Paris?', previous_response_id: one.id, tools: [weather] });
    const call1 = two.output.find((item) => item.type === 'function_call');
    expect(call1).toMatchObject({ type: 'function_call', name: 'get_weather' });
    const three = await client.responses.create({
      model: 'fake-gpt',
      previous_response_id: two.id,
      tools: [weather],
      input: [{ type: 'function_call_output', call_id: (call1 as { call_id: string }).call_id, output: '18°C, sunny' }],
    });
    expect(three).toMatchObject({ previous_response_id: two.id, output_text: 'It is sunny in Paris.' });
    const messages = (upstream.requests[2]?.body as { messages: unknown }).messages as Array<{ role: string; content?: unknown; tool_calls?: unknown }>;
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool']);
    expect(messages[0]?.content).toBe('I am Ada.');
    expect(messages[1]?.content).toBe('Hello Ada.');
    expect(messages[3]?.tool_calls).toHaveLength(1);
    expect(messages[4]?.content).toBe('18°C, sunny');
  });

  it('resolves an item_reference to an earlier output item', async () => {
    upstream.script([
      { kind: 'ok', text: 'Earlier answer.' },
      { kind: 'ok', text: 'Later.' },
    ]);
    const first = await client.responses.create({ model: 'fake-gpt', input: 'First' });
    const messageId = first.output[0]?.id as string;
    await client.responses.create({
      model: 'fake-gpt',
      input: [
        { role: 'user', content: 'First' },
        { type: 'item_reference', id: messageId },
        { role: 'user', content: 'Go on' },
      ],
    });
    const messages = (upstream.requests[1]?.body as { messages: unknown }).messages as Array<{ role: string; content: unknown }>;
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'First'],
      ['assistant', 'Earlier answer.'],
      ['user', 'Go on'],
    ]);
    const error = await apiFailure(client.responses.create({ model: 'fake-gpt', input: [{ type: 'item_reference', id: 'msg_unknown' }] }));
    expect([error.status, error.error]).toMatchObject([400, { param: 'input[0].id' }]);
  });

  it('lists input items in pages, both orders', async () => {
    const input = ['a', 'b', 'c', 'd', 'e'].map((text) => ({ role: 'user' as const, content: text }));
    const created = await client.responses.create({ model: 'sim', input });
    const texts = (items: Array<{ content?: unknown }>) => items.map((item) => item.content);
    const first = await client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' });
    expect(texts(first.data as never)).toEqual(['a', 'b']);
    expect(first.has_more).toBe(true);
    const all: unknown[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' })) all.push(item);
    expect(texts(all as never)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(texts((await client.responses.inputItems.list(created.id)).data as never)).toEqual(['e', 'd', 'c', 'b', 'a']);
  });

  it('deletes for good: then every route is 404, and so is another tenant’s id', async () => {
    const created = await client.responses.create({ model: 'sim', input: 'Forget me' });
    expect(await client.responses.delete(created.id)).toMatchObject({ id: created.id, object: 'response', deleted: true });
    const calls = [
      () => client.responses.retrieve(created.id),
      () => client.responses.delete(created.id),
      () => client.responses.cancel(created.id),
      () => client.responses.inputItems.list(created.id),
    ];
    for (const attempt of calls) expect((await apiFailure(attempt())).status).toBe(404);
    const kept = await client.responses.create({ model: 'sim', input: 'Mine' });
    const other = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('globex', 'app')).secret, maxRetries: 0 });
    const others = [() => other.responses.retrieve(kept.id), () => other.responses.delete(kept.id), () => other.responses.inputItems.list(kept.id)];
    for (const attempt of others) expect((await apiFailure(attempt())).status).toBe(404);
    expect((await apiFailure(other.responses.create({ model: 'sim', input: 'Hi', previous_response_id: kept.id }))).status).toBe(400);
    expect((await client.responses.retrieve(kept.id)).id).toBe(kept.id);
  });

  it('deleted before the outbox carried it to the store, it stays deleted there', async () => {
    const created = await client.responses.create({ model: 'sim', input: 'Gone before it landed' });
    await client.responses.delete(created.id);
    // As if Redis's tombstone had expired: the store must say deleted on its own, whenever the outbox wrote the response.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await gateway.redis.del(gateway.keys.response('acme', created.id));
    expect((await apiFailure(client.responses.retrieve(created.id))).status).toBe(404);
    expect(await gateway.repository.responses.get('acme', created.id)).toBeNull();
  });

  it('is read from the store once Redis has let it go', async () => {
    const created = await client.responses.create({ model: 'sim', input: 'Keep me' });
    await eventually(async () => (await gateway.repository.responses.get('acme', created.id)) !== null, 5000, 'the response in the store');
    await gateway.redis.del(gateway.keys.response('acme', created.id));
    expect(await client.responses.retrieve(created.id)).toMatchObject({ id: created.id, status: 'completed', output_text: created.output_text });
  });

  it('stores what the PII policy masked, never the value', async () => {
    const admin = (await gateway.issueKey('masked', 'admin')).secret;
    expect((await call(gateway.origin, admin, 'PUT', '/internal/v1/pii-policy', { mode: 'mask' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const masked = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('masked', 'app')).secret, maxRetries: 0 });
    const created = await masked.responses.create({ model: 'sim', input: 'Mail ada@example.com about it.' });
    const items = await masked.responses.inputItems.list(created.id);
    expect(JSON.stringify(items.data)).toContain('Mail [EMAIL_1] about it.');
    await eventually(async () => (await gateway.repository.responses.get('masked', created.id)) !== null, 5000, 'the response in the store');
    expect(JSON.stringify(await gateway.repository.responses.get('masked', created.id))).not.toContain('ada@example.com');
  });

  it('carries its response id in the usage record', async () => {
    const { data, response } = await client.responses.create({ model: 'sim', input: 'Count me' }).withResponse();
    const record = await usageRecordOf(gateway, adminSecret, response.headers.get('x-request-id') as string);
    expect(record.response_id).toBe(data.id);
  });
});

describe('a tenant whose data policy stores nothing', () => {
  it('ignores store: true, refuses previous_response_id with a 400, and still polls a background response', async () => {
    const admin = (await gateway.issueKey('zdr', 'admin')).secret;
    expect((await call(gateway.origin, admin, 'PUT', '/internal/v1/data-policy', { store_responses: false, retention_days: 30 })).status).toBe(200);
    const zdr = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('zdr', 'app')).secret, maxRetries: 0 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const created = await zdr.responses.create({ model: 'sim', input: 'Hi', store: true });
    expect((created as unknown as { store: boolean }).store).toBe(false);
    expect((await apiFailure(zdr.responses.retrieve(created.id))).status).toBe(404);
    const refused = await apiFailure(zdr.responses.create({ model: 'sim', input: 'Hi', previous_response_id: created.id }));
    expect([refused.status, refused.error]).toMatchObject([400, { param: 'previous_response_id' }]);
    const background = await zdr.responses.create({ model: 'sim', input: 'Hi', background: true });
    expect((background as unknown as { store: boolean }).store).toBe(false);
    const client2 = zdr;
    let status = background.status;
    await eventually(async () => {
      status = (await client2.responses.retrieve(background.id)).status;
      return status === 'completed';
    });
    expect(status).toBe('completed');
  });
});

describe('webhooks of background responses', () => {
  it('sends response.completed and response.cancelled, signed so that the SDK unwraps them; a synchronous response sends none', async () => {
    const tenant = 'hooked';
    const admin = (await gateway.issueKey(tenant, 'admin')).secret;
    const hooked = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey(tenant, 'app')).secret, maxRetries: 0 });
    const registered = await call(gateway.origin, admin, 'POST', '/internal/v1/webhooks', {
      url: `${hook.origin}/hooks`,
      events: ['response.completed', 'response.cancelled', 'response.failed'],
    });
    expect(registered.status).toBe(201);
    const secret = registered.body.secret as string;
    upstream.script([
      { kind: 'ok', text: 'Synchronous.' },
      { kind: 'ok', text: 'Background.' },
    ]);
    await hooked.responses.create({ model: 'fake-gpt', input: 'Not a background one' });
    const done = await hooked.responses.create({ model: 'fake-gpt', input: 'Tell me when done', background: true });
    await eventually(async () => (await hooked.responses.retrieve(done.id)).status === 'completed', 10_000, 'the response to end');
    const [completed] = await hook.waitFor(1, 10_000);
    expect(await unwrap(completed!, secret)).toMatchObject({ object: 'event', type: 'response.completed', data: { id: done.id } });
    upstream.script([{ kind: 'hang' }]);
    const stopped = await hooked.responses.create({ model: 'fake-gpt', input: 'Stop me', background: true });
    await eventually(async () => (await hooked.responses.retrieve(stopped.id)).status === 'in_progress', 5000, 'the response to run');
    await hooked.responses.cancel(stopped.id);
    const deliveries = await hook.waitFor(2, 10_000);
    expect(await unwrap(deliveries[1]!, secret)).toMatchObject({ type: 'response.cancelled', data: { id: stopped.id } });
    // Exactly these two: the synchronous response sent none, and the cancelled one's end no second event.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hook.deliveries.map((delivery) => (JSON.parse(delivery.body) as { data: { id: string } }).data.id)).toEqual([done.id, stopped.id]);
  });
});
