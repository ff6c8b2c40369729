/**
 * POST /v1/responses/compact with the official `openai` SDK (`client.responses.compact`) against
 * web and worker processes, for a fake OpenAI-compatible upstream, a fake Anthropic and a fake
 * Gemini: the requested model writes the summary (a queued call, with its usage record), the
 * answer is OpenAI's compacted response, and its output sent back with the next user message is
 * a conversation /v1/responses serves on every provider, the upstream reading the summary. What
 * this gateway cannot read (OpenAI's own compaction items) is a 400 naming the item.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { ResponseCompactionItem, ResponseInputItem, ResponseInputMessageItem } from 'openai/resources/responses/responses';
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import { ANTHROPIC_FIXTURE_MODEL, startAnthropicUpstream, type FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { GEMINI_FIXTURE_MODEL, startGeminiUpstream, type FakeGemini } from '../helpers/fake-gemini.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { call } from '../helpers/http.ts';
import { apiFailure, usageRecordOf } from '../helpers/sdk-calls.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

let upstream: FakeUpstream;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gateway: GatewayUnderTest;
let admin: string;
let client: OpenAI;

beforeAll(async () => {
  [upstream, anthropic, gemini] = await Promise.all([startFakeUpstream(), startAnthropicUpstream(), startGeminiUpstream()]);
  const catalog: WrittenCatalog = testCatalog(upstream.url);
  catalog.models.claude = { ...ANTHROPIC_FIXTURE_MODEL, base_url: anthropic.url };
  catalog.models.gemini = { ...GEMINI_FIXTURE_MODEL, base_url: gemini.url };
  gateway = await startGateway({ catalog, env: { ANTHROPIC_API_KEY: 'sk-ant-e2e', GEMINI_API_KEY: 'gm-e2e', RETRY_BASE_MS: '50', RETRY_MAX_ATTEMPTS: '2' } });
  admin = (await gateway.issueKey('acme', 'admin')).secret;
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'app')).secret, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([upstream?.close(), anthropic?.close(), gemini?.close()]);
});

beforeEach(() => {
  upstream.reset();
  anthropic.reset();
  gemini.reset();
});

const SUMMARY = 'The user wants a landing page for a dog cafe; index.html holds a first version with a hero section. Next: the colours.';

/** A conversation of a tool loop, as a Responses client holds it. */
const CONVERSATION: ResponseInputItem[] = [
  { role: 'user', content: 'Create a landing page for a dog petting cafe.' },
  { type: 'function_call', call_id: 'call_w1', name: 'write_file', arguments: '{"path":"index.html"}' },
  { type: 'function_call_output', call_id: 'call_w1', output: 'written' },
  {
    type: 'message',
    id: 'msg_001',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: 'index.html has a hero section.', annotations: [] }],
  },
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Looks good.' }] },
];

/** Each provider: its alias, how to script its next two answers (the summary, then a reply), and the bodies it received. */
const PROVIDERS = {
  'the OpenAI-compatible fake': {
    model: 'fake-gpt',
    script: (texts: string[]) => upstream.script(texts.map((text) => ({ kind: 'ok' as const, text }))),
    bodies: () => upstream.requests.map((request) => JSON.stringify(request.body)),
  },
  Anthropic: {
    model: 'claude',
    script: (texts: string[]) => anthropic.script(texts.map((text) => ({ kind: 'ok' as const, text }))),
    bodies: () => anthropic.requests.map((request) => JSON.stringify(request.body)),
  },
  Gemini: {
    model: 'gemini',
    script: (texts: string[]) => gemini.script(texts.map((text) => ({ kind: 'ok' as const, text }))),
    bodies: () => gemini.requests.map((request) => JSON.stringify(request.body)),
  },
};

describe('compact, then continue', () => {
  it.each(Object.entries(PROVIDERS))(
    '%s: summarizes the conversation, and reads the summary back on the next turn',
    async (_name, { model, script, bodies }) => {
      script([SUMMARY, 'Blue it is.']);
      const { data: compacted, response } = await client.responses
        .compact({ model, instructions: 'You are a web designer.', input: CONVERSATION })
        .withResponse();
      const requestId = response.headers.get('x-request-id') as string;
      expect(compacted).toMatchObject({ id: `resp_${requestId}`, object: 'response.compaction', created_at: expect.any(Number) });
      expect(Math.abs(compacted.created_at - Date.now() / 1000)).toBeLessThan(60);
      // The user messages as they were, then one compaction item.
      expect(compacted.output).toHaveLength(3);
      const kept = compacted.output.slice(0, 2) as unknown as ResponseInputMessageItem[];
      expect(kept.map(({ type, role, status, content }) => ({ type, role, status, content }))).toEqual([
        { type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Create a landing page for a dog petting cafe.' }] },
        { type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Looks good.' }] },
      ]);
      const item = compacted.output[2] as ResponseCompactionItem;
      expect(item).toEqual({ type: 'compaction', id: expect.stringMatching(/^cmp_/), encrypted_content: expect.stringMatching(/^gw\.compaction\.1:/) });
      expect(compacted.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) });
      expect(compacted.usage.input_tokens).toBeGreaterThan(0);

      // The summary call: the compaction prompt, the instructions and the conversation as text, no tools.
      const [summaryCall] = bodies();
      expect(summaryCall).toContain('You compact a conversation');
      expect(summaryCall).toContain('You are a web designer.');
      expect(summaryCall).toContain('index.html has a hero section.');
      expect(summaryCall).toContain('assistant called write_file (call call_w1)');
      expect(summaryCall).not.toMatch(/"tools"|functionDeclarations/);

      // The next turn: the compacted output, then the new message, on the same provider.
      const next = await client.responses.create({
        model,
        input: [...(compacted.output as ResponseInputItem[]), { role: 'user', content: 'Now make it blue.' }],
      });
      expect(next).toMatchObject({ status: 'completed', output_text: 'Blue it is.' });
      const nextCall = bodies()[1] as string;
      expect(nextCall).toContain(SUMMARY);
      expect(nextCall).toContain('The conversation before this point was compacted');
      expect(nextCall).toContain('Create a landing page for a dog petting cafe.');
      expect(nextCall).toContain('Now make it blue.');
      // What the summary replaced is gone.
      expect(nextCall).not.toContain('index.html has a hero section.');
      expect(bodies()).toHaveLength(2);
    },
  );

  it('compacts a compacted conversation again: the earlier summary is read, one compaction item comes back', async () => {
    upstream.script([
      { kind: 'ok', text: 'First summary.' },
      { kind: 'ok', text: 'Second summary.' },
    ]);
    const first = await client.responses.compact({ model: 'fake-gpt', input: CONVERSATION });
    const second = await client.responses.compact({
      model: 'fake-gpt',
      input: [...(first.output as ResponseInputItem[]), { role: 'user', content: 'Make it blue.' }, { role: 'assistant', content: 'Made it blue.' }],
    });
    expect(JSON.stringify(upstream.requests[1]?.body)).toContain('First summary.');
    expect(second.output.map((item) => item.type)).toEqual(['message', 'message', 'message', 'compaction']);
    const next = await client.responses.create({ model: 'fake-gpt', input: [...(second.output as ResponseInputItem[]), { role: 'user', content: 'Thanks.' }] });
    expect(next.status).toBe('completed');
    const sent = JSON.stringify(upstream.requests[2]?.body);
    expect(sent).toContain('Second summary.');
    expect(sent).not.toContain('First summary.');
  });

  it("records the compaction's usage under its own kind, responses_compact", async () => {
    upstream.script([{ kind: 'ok', text: 'A short summary of four words.' }]);
    const { response } = await client.responses.compact({ model: 'fake-gpt', input: CONVERSATION }).withResponse();
    const record = await usageRecordOf(gateway, admin, response.headers.get('x-request-id') as string);
    expect(record).toMatchObject({
      operation: 'responses_compact',
      model: 'fake-gpt',
      provider: 'openai-compatible',
      usage_source: 'provider',
      status: 'succeeded',
      stream: false,
    });
    expect(record.completion_tokens).toBe(6);
    expect(record.prompt_tokens).toBeGreaterThan(0);
  });
});

describe('refusals', () => {
  const foreign = { type: 'compaction' as const, id: 'cmp_001', encrypted_content: 'gAAAAABpM0Yj-opaque-to-this-gateway=' };

  it("/v1/responses: OpenAI's own compaction item → 400 invalid_value naming its encrypted_content, streamed or not", async () => {
    for (const stream of [false, true]) {
      const error = await apiFailure(client.responses.create({ model: 'fake-gpt', input: [{ role: 'user', content: 'Hi' }, foreign], stream }));
      expect([error.status, error.error]).toMatchObject([400, { code: 'invalid_value', param: 'input[1].encrypted_content', type: 'invalid_request_error' }]);
      expect(error.message).toContain('not made by this gateway');
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ["OpenAI's own compaction item", { input: [{ role: 'user', content: 'Hi' }, foreign] }, 'invalid_value', 'input[1].encrypted_content'],
    ['a compaction item without encrypted_content', { input: [{ type: 'compaction' }] }, 'missing_required_field', 'input[0].encrypted_content'],
    ['no input', {}, 'missing_required_field', 'input'],
    ['an item without its fields', { input: [{ type: 'function_call', call_id: 'c1', name: 'f' }] }, 'missing_required_field', 'input[0].arguments'],
    ['previous_response_id', { input: 'Hi', previous_response_id: 'resp_1' }, 'invalid_value', 'previous_response_id'],
  ])('compact: %s → 400 naming the field', async (_what, body, code, param) => {
    const error = await apiFailure(client.responses.compact({ model: 'fake-gpt', ...body }));
    expect([error.status, error.error]).toMatchObject([400, { code, param, type: 'invalid_request_error' }]);
    expect(upstream.requests).toHaveLength(0);
  });

  it('compact: an unknown model → 404, a conversation beyond the window → 422 naming input, an auditor → 403', async () => {
    const unknown = await apiFailure(client.responses.compact({ model: 'no-such-model', input: 'Hi' }));
    expect([unknown.status, unknown.error]).toMatchObject([404, { code: 'model_not_found', param: 'model' }]);
    const long = await apiFailure(client.responses.compact({ model: 'fake-tiny', input: 'word '.repeat(200) }));
    expect([long.status, long.error]).toMatchObject([422, { code: 'context_length_exceeded', param: 'input' }]);
    const auditor = new OpenAI({ baseURL: gateway.baseURL, apiKey: (await gateway.issueKey('acme', 'auditor')).secret, maxRetries: 0 });
    const denied = await apiFailure(auditor.responses.compact({ model: 'fake-gpt', input: 'Hi' }));
    expect([denied.status, denied.error]).toMatchObject([403, { code: 'permission_denied' }]);
    expect(upstream.requests).toHaveLength(0);
  });

  it('compact: an answer without a summary → 502 provider_failed', async () => {
    upstream.script([{ kind: 'ok', text: '' }]);
    const error = await apiFailure(client.responses.compact({ model: 'fake-gpt', input: 'Hi' }));
    expect([error.status, error.error]).toMatchObject([502, { code: 'provider_failed' }]);
  });

  it('other methods on /v1/responses/compact → 405 with Allow: POST', async () => {
    const response = await call(gateway.origin, admin, 'GET', '/v1/responses/compact');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});
