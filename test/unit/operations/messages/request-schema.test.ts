/** The door's schemas of POST /v1/messages and /v1/messages/count_tokens, on a tiny Fastify app with the gateway's error mapping. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import type Anthropic from '@anthropic-ai/sdk';
import { Value } from '@sinclair/typebox/value';
import { errorsPlugin } from '../../../../src/web/plugins/errors.ts';
import { CountTokensRequestSchema, MessagesRequestSchema } from '../../../../src/wire/anthropic-messages.ts';

const PDF = 'JVBERi0xLjQK';
const PNG = 'iVBORw0KGgo=';

/** Nearly every feature of a request, typed by the official SDK. */
const FULL_REQUEST: Anthropic.Messages.MessageCreateParams = {
  model: 'claude-sonnet-4-5',
  max_tokens: 4096,
  system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
  metadata: { user_id: 'user-1' },
  stop_sequences: ['STOP'],
  service_tier: 'auto',
  thinking: { type: 'enabled', budget_tokens: 2048, display: 'summarized' },
  output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } },
  tools: [
    {
      name: 'get_weather',
      description: 'Weather',
      input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      cache_control: { type: 'ephemeral' },
      strict: true,
    },
    { type: 'custom', name: 'noop', input_schema: { type: 'object' } },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    { type: 'bash_20250124', name: 'bash' },
  ],
  tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Look:', cache_control: { type: 'ephemeral' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Report' },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain' } },
        { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
        { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'part' }] } },
        { type: 'search_result', source: 'https://example.com', title: 'Result', content: [{ type: 'text', text: 'found' }] },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Calling.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' }, caller: { type: 'direct' } },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'paris' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'web_search_tool_result_error', error_code: 'unavailable' } },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content: [
            { type: 'text', text: 'sunny' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
          is_error: false,
        },
        { type: 'text', text: 'Thanks' },
      ],
    },
  ],
};

let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify({ logger: false, ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } } });
  await app.register(errorsPlugin, { bodyLimit: 1 << 20 });
  app.post('/v1/messages', { schema: { body: MessagesRequestSchema } }, async () => ({ ok: true }));
  app.post('/v1/messages/count_tokens', { schema: { body: CountTokensRequestSchema } }, async () => ({ ok: true }));
  await app.ready();
});

afterAll(async () => {
  await app?.close();
});

async function post(body: unknown, url = '/v1/messages') {
  const response = await app.inject({ method: 'POST', url, payload: body as object });
  return { status: response.statusCode, body: response.json<{ ok?: true; error?: { code: string; param: string | null } }>() };
}

const userSays = (content: unknown) => ({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content }] });
const assistantSaid = (block: unknown) => ({
  model: 'm',
  max_tokens: 10,
  messages: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: [block] },
  ],
});
const withField = (field: Record<string, unknown>) => ({ ...userSays('hi'), ...field });

describe('POST /v1/messages schema: what the door admits', () => {
  it("admits a request built with the official SDK's types, server tools and their blocks included", async () => {
    expect(Value.Check(MessagesRequestSchema, FULL_REQUEST)).toBe(true);
    expect(await post(FULL_REQUEST)).toEqual({ status: 200, body: { ok: true } });
  });

  it('admits fields and block types it does not know, for an Anthropic upstream to read', async () => {
    const body = { ...userSays([{ type: 'future_block', anything: 1 }]), context_management: { edits: [] }, cache_control: { type: 'ephemeral' } };
    expect(await post(body)).toEqual({ status: 200, body: { ok: true } });
  });

  it('admits the sampling fields older clients send', async () => {
    expect(await post(withField({ temperature: 0.5, top_p: 0.9, top_k: 40 }))).toEqual({ status: 200, body: { ok: true } });
  });

  it('admits a system turn among the messages and a string system prompt', async () => {
    const body = {
      model: 'm',
      max_tokens: 10,
      system: 'Be brief.',
      messages: [
        { role: 'system', content: 'Now in French.' },
        { role: 'user', content: 'hi' },
      ],
    };
    expect(await post(body)).toEqual({ status: 200, body: { ok: true } });
  });

  it('admits a count_tokens request built with the SDK, without max_tokens', async () => {
    const params: Anthropic.Messages.MessageCountTokensParams = {
      model: 'claude-sonnet-4-5',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ name: 'noop', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any' },
      thinking: { type: 'adaptive' },
    };
    expect(Value.Check(CountTokensRequestSchema, params)).toBe(true);
    expect(await post(params, '/v1/messages/count_tokens')).toEqual({ status: 200, body: { ok: true } });
  });
});

describe('POST /v1/messages schema: an error names the field', () => {
  const CASES: Array<[string, unknown, string, string]> = [
    ['no max_tokens', { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 'missing_required_field', 'max_tokens'],
    ['max_tokens 0', withField({ max_tokens: 0 }), 'invalid_value', 'max_tokens'],
    ['no messages', { ...userSays('hi'), messages: [] }, 'invalid_value', 'messages'],
    ['an unknown role', { ...userSays('hi'), messages: [{ role: 'robot', content: 'hi' }] }, 'invalid_value', 'messages[0].role'],
    ['a text block without text', userSays([{ type: 'text' }]), 'missing_required_field', 'messages[0].content[0].text'],
    ['an image without source', userSays([{ type: 'image' }]), 'missing_required_field', 'messages[0].content[0].source'],
    [
      'a base64 source without data',
      userSays([{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }]),
      'missing_required_field',
      'messages[0].content[0].source.data',
    ],
    ['a url source without url', userSays([{ type: 'document', source: { type: 'url' } }]), 'missing_required_field', 'messages[0].content[0].source.url'],
    ['an image source that is a string', userSays([{ type: 'image', source: 'https://example.com/a.png' }]), 'invalid_value', 'messages[0].content[0].source'],
    ['a tool_use without input', assistantSaid({ type: 'tool_use', id: 't1', name: 'f' }), 'missing_required_field', 'messages[1].content[0].input'],
    [
      'a tool_use input that is a string',
      assistantSaid({ type: 'tool_use', id: 't1', name: 'f', input: '{}' }),
      'invalid_value',
      'messages[1].content[0].input',
    ],
    ['a tool_result without tool_use_id', userSays([{ type: 'tool_result', content: 'x' }]), 'missing_required_field', 'messages[0].content[0].tool_use_id'],
    [
      'a tool_result content that is an object',
      userSays([{ type: 'tool_result', tool_use_id: 't1', content: { text: 'x' } }]),
      'invalid_value',
      'messages[0].content[0].content',
    ],
    [
      'a text block in a tool result without text',
      userSays([{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text' }] }]),
      'missing_required_field',
      'messages[0].content[0].content[0].text',
    ],
    ['a thinking block without signature', assistantSaid({ type: 'thinking', thinking: 'x' }), 'missing_required_field', 'messages[1].content[0].signature'],
    ['a redacted_thinking block without data', assistantSaid({ type: 'redacted_thinking' }), 'missing_required_field', 'messages[1].content[0].data'],
    ['a system block that is not text', withField({ system: [{ type: 'image', text: 'x' }] }), 'invalid_value', 'system[0].type'],
    ['a client tool without input_schema', withField({ tools: [{ name: 'f' }] }), 'missing_required_field', 'tools[0].input_schema'],
    ['a custom tool without input_schema', withField({ tools: [{ type: 'custom', name: 'f' }] }), 'missing_required_field', 'tools[0].input_schema'],
    ['a tool choice of a tool without name', withField({ tool_choice: { type: 'tool' } }), 'missing_required_field', 'tool_choice.name'],
    ['an unknown tool choice', withField({ tool_choice: { type: 'sometimes' } }), 'invalid_value', 'tool_choice.type'],
    ['enabled thinking without budget', withField({ thinking: { type: 'enabled' } }), 'missing_required_field', 'thinking.budget_tokens'],
    ['a thinking budget under 1024', withField({ thinking: { type: 'enabled', budget_tokens: 512 } }), 'invalid_value', 'thinking.budget_tokens'],
    ['a temperature above 1', withField({ temperature: 1.5 }), 'invalid_value', 'temperature'],
    ['an unknown effort', withField({ output_config: { effort: 'extreme' } }), 'invalid_value', 'output_config.effort'],
    ['a format without schema', withField({ output_config: { format: { type: 'json_schema' } } }), 'missing_required_field', 'output_config.format.schema'],
  ];

  it.each(CASES)('%s', async (_name, body, code, param) => {
    const { status, body: answer } = await post(body);
    expect(status).toBe(400);
    expect(answer.error).toMatchObject({ code, param });
  });

  it('count_tokens refuses a request without messages, naming them', async () => {
    const { status, body } = await post({ model: 'm' }, '/v1/messages/count_tokens');
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'missing_required_field', param: 'messages' });
  });
});
