import { describe, it, expect } from 'vitest';
import { readdirSync } from 'node:fs';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ModelOf } from '../../../../src/providers/model.ts';
import { ChatCompletionRequestSchema } from '../../../../src/operations/chat/request-schema.ts';
import { InvalidValueError, UnsupportedParameterError } from '../../../../src/errors/gateway-error.ts';
import { anthropicDescriptor } from '../../../../src/providers/anthropic/descriptor.ts';
import { buildAnthropicBody, buildAnthropicRequest } from '../../../../src/providers/anthropic/request.ts';
import type { ChatMessage, ChatRequest } from '../../../../src/wire/openai-chat.ts';
import { ANTHROPIC_FIXTURES_DIR, ANTHROPIC_FIXTURE_MODEL, readAnthropicFixture } from '../../../helpers/fake-anthropic.ts';
import { targetFor } from '../../../helpers/provider-calls.ts';
import { gatewayError as refusal } from '../../../helpers/gateway-errors.ts';

type Model = ModelOf<typeof anthropicDescriptor>;

interface RequestFixture {
  description: string;
  model?: Partial<Model>;
  stream: boolean;
  openai: ChatRequest;
  upstream: Record<string, unknown>;
}

const REQUIRED_CASES = [
  'text',
  'system-and-developer',
  'multi-turn',
  'tools-and-tool-choice',
  'tool-results-grouped',
  'images',
  'pdf-file',
  'cache-control',
  'json-schema',
  'stop-and-user',
  'reasoning-budget',
  'reasoning-adaptive',
  'catalog-reasoning',
  'thinking-carried',
  'max-completion-tokens',
  'stream',
];
const CASES = readdirSync(new URL('requests/', ANTHROPIC_FIXTURES_DIR))
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -'.json'.length))
  .sort();
const doorChecker = TypeCompiler.Compile(ChatCompletionRequestSchema);

function fixture(name: string): RequestFixture {
  return JSON.parse(readAnthropicFixture(`requests/${name}.json`)) as RequestFixture;
}

function target(model: Partial<Model> = {}, apiKey: string | null = 'sk-ant-test') {
  return targetFor<Model>({ ...ANTHROPIC_FIXTURE_MODEL, base_url: 'http://127.0.0.1:9', ...model }, apiKey, 'claude-test');
}

function body(messages: ChatMessage[], fields: Partial<ChatRequest> = {}): ChatRequest {
  return { messages, ...fields };
}

const user = (content: ChatMessage['content']): ChatMessage => ({ role: 'user', content });

describe('anthropic request fixtures', () => {
  it('cover every case the brief lists', () => {
    expect(CASES).toEqual(expect.arrayContaining(REQUIRED_CASES));
  });

  it.each(CASES)('%s: translates to the recorded upstream body', (name) => {
    const { model, openai, stream, upstream } = fixture(name);
    expect(buildAnthropicBody(target(model), openai, stream)).toEqual(upstream);
    expect(JSON.parse(buildAnthropicRequest(target(model), openai, stream).body)).toEqual(upstream);
  });

  it.each(CASES)('%s: is a request the door accepts for an Anthropic model', (name) => {
    const { openai, stream } = fixture(name);
    expect(doorChecker.Errors({ ...openai, model: 'claude-test', stream }).First()).toBeUndefined();
    const unlisted = Object.keys(openai).filter(
      (key) => key !== 'messages' && !anthropicDescriptor.params.has(key) && openai[key as keyof ChatRequest] !== null,
    );
    expect(unlisted).toEqual([]);
  });
});

describe('anthropic request addressing', () => {
  it('posts to {base_url}/v1/messages with the key, version and beta headers', () => {
    const call = buildAnthropicRequest(
      target({ base_url: 'http://upstream.test/', anthropic_beta: ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'] }),
      body([user('hi')]),
      true,
    );
    expect(call.url).toBe('http://upstream.test/v1/messages');
    expect(call.headers).toEqual({
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'sk-ant-test',
      'anthropic-beta': 'context-1m-2025-08-07,interleaved-thinking-2025-05-14',
    });
  });

  it("uses Anthropic's public endpoint without a base_url, and sends no key header without a key", () => {
    const { base_url: _unused, ...withoutBase } = target().model;
    for (const apiKey of [null, '']) {
      const call = buildAnthropicRequest(targetFor<Model>(withoutBase, apiKey), body([user('hi')]), false);
      expect(call.url).toBe('https://api.anthropic.com/v1/messages');
      expect(call.headers['x-api-key']).toBeUndefined();
      expect(call.headers['anthropic-beta']).toBeUndefined();
      expect(call.headers.accept).toBe('application/json');
    }
  });
});

describe('anthropic request translation details', () => {
  it('puts tool results before the text of a user message that came first in the same turn', () => {
    const messages: ChatMessage[] = [
      user('Weather?'),
      { role: 'assistant', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      user('Also, be brief.'),
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny' },
    ];
    expect(buildAnthropicBody(target(), body(messages), false).messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' },
        { type: 'text', text: 'Also, be brief.' },
      ],
    });
  });

  it('turns tool-result text parts (with cache_control) and image parts into blocks', () => {
    const messages: ChatMessage[] = [
      user('Look'),
      { role: 'assistant', tool_calls: [{ id: 'toolu_2', type: 'function', function: { name: 'snap', arguments: '{}' } }] },
      {
        role: 'tool',
        tool_call_id: 'toolu_2',
        content: [
          { type: 'text', text: 'A photo:', cache_control: { type: 'ephemeral' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        ],
      },
    ];
    expect(buildAnthropicBody(target(), body(messages), false).messages.at(-1)?.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_2',
        content: [
          { type: 'text', text: 'A photo:', cache_control: { type: 'ephemeral' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        ],
      },
    ]);
  });

  it('sends a refusal part back as its text, leaves out an empty assistant message, and ignores reasoning_content without thinking_blocks', () => {
    const messages: ChatMessage[] = [
      user('One'),
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }], reasoning_content: 'unsigned thoughts' },
      user('Two'),
      { role: 'assistant', content: [{ type: 'refusal', refusal: '' }] },
      user('Three'),
      { role: 'assistant', content: 'Sure.', reasoning_content: 'more unsigned thoughts' },
    ];
    expect(buildAnthropicBody(target(), body(messages), false).messages).toEqual([
      { role: 'user', content: 'One' },
      { role: 'assistant', content: [{ type: 'text', text: 'No.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Two' },
          { type: 'text', text: 'Three' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Sure.' }] },
    ]);
  });

  it('decodes a percent-encoded text/plain data URL', () => {
    const part = { type: 'file', file: { file_data: 'data:text/plain,caf%C3%A9%20au%20lait' } };
    expect(buildAnthropicBody(target(), body([user([part])]), false).messages[0]?.content).toEqual([
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'café au lait' } },
    ]);
  });

  it.each([
    ['minimal', 1024],
    ['low', 2048],
    ['medium', 8192],
    ['high', 24576],
    ['xhigh', 32768],
  ])("maps reasoning_effort '%s' to budget_tokens %d", (effort, budget) => {
    expect(buildAnthropicBody(target(), body([user('hi')], { max_tokens: 64000, reasoning_effort: effort }), false).thinking).toEqual({
      type: 'enabled',
      budget_tokens: budget,
    });
  });

  it.each([
    ['minimal', 'low'],
    ['low', 'low'],
    ['medium', 'medium'],
    ['high', 'high'],
    ['xhigh', 'xhigh'],
  ])("maps adaptive reasoning_effort '%s' to output_config.effort '%s'", (effort, anthropicEffort) => {
    const translated = buildAnthropicBody(target({ thinking: 'adaptive' }), body([user('hi')], { reasoning_effort: effort }), false);
    expect(translated.thinking).toEqual({ type: 'adaptive' });
    expect(translated.output_config).toEqual({ effort: anthropicEffort });
  });

  it('takes the request reasoning_effort over the catalog one, and the smallest budget when max_tokens is 1025', () => {
    const translated = buildAnthropicBody(target({ reasoning_effort: 'high' }), body([user('hi')], { max_tokens: 1025, reasoning_effort: 'minimal' }), false);
    expect(translated.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
  });
});

describe('anthropic request refusals', () => {
  const call = { id: 'toolu_9', type: 'function' as const, function: { name: 'f', arguments: '' } };

  it.each([
    ['not JSON', '{"city": '],
    ['an array', '[1, 2]'],
    ['a string', '"Paris"'],
  ])('refuses tool call arguments that are %s, naming them', (_what, args) => {
    const error = refusal(() =>
      buildAnthropicBody(target(), body([user('hi'), { role: 'assistant', tool_calls: [call, { ...call, function: { name: 'f', arguments: args } }] }]), false),
    );
    expect(error).toBeInstanceOf(InvalidValueError);
    expect(error).toMatchObject({ status: 400, param: 'messages[1].tool_calls[1].function.arguments' });
  });

  it('refuses the deprecated function role (422)', () => {
    const error = refusal(() => buildAnthropicBody(target(), body([user('hi'), { role: 'function', name: 'f', content: '{}' }]), false));
    expect(error).toBeInstanceOf(UnsupportedParameterError);
    expect(error).toMatchObject({ status: 422, param: 'messages[1].role' });
  });

  it('refuses a file sent by file_id only (422)', () => {
    const error = refusal(() =>
      buildAnthropicBody(
        target(),
        body([
          user([
            { type: 'text', text: 'Read' },
            { type: 'file', file: { file_id: 'file-abc123' } },
          ]),
        ]),
        false,
      ),
    );
    expect(error).toBeInstanceOf(UnsupportedParameterError);
    expect(error).toMatchObject({ status: 422, param: 'messages[0].content[1].file.file_id' });
  });

  it("refuses response_format 'json_object' (422), Anthropic taking json_schema only", () => {
    const error = refusal(() => buildAnthropicBody(target(), body([user('hi')], { response_format: { type: 'json_object' } }), false));
    expect(error).toBeInstanceOf(UnsupportedParameterError);
    expect(error).toMatchObject({ status: 422, param: 'response_format' });
    expect(error.message).toContain('json_schema');
  });

  it('refuses an unknown reasoning_effort', () => {
    const error = refusal(() => buildAnthropicBody(target(), body([user('hi')], { reasoning_effort: 'extreme' }), false));
    expect(error).toMatchObject({ status: 400, param: 'reasoning_effort' });
    expect(error.message).toContain('none, minimal, low, medium, high, xhigh');
  });

  it('refuses reasoning when max_tokens leaves no room for the smallest budget', () => {
    const error = refusal(() => buildAnthropicBody(target(), body([user('hi')], { max_tokens: 1024, reasoning_effort: 'low' }), false));
    expect(error).toMatchObject({ status: 400, param: 'max_tokens' });
    expect(error.message).toMatch(/^With reasoning, Anthropic needs max_tokens above 1024/);
    expect(buildAnthropicBody(target(), body([user('hi')], { max_tokens: 1024, reasoning_effort: 'none' }), false).thinking).toBeUndefined();
  });

  it.each([
    ['an image data URL that is not base64', [{ type: 'image_url', image_url: { url: 'data:image/png,rawbytes' } }], 'messages[0].content[0].image_url.url'],
    ['an image URL of another scheme', [{ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }], 'messages[0].content[0].image_url.url'],
    ['file_data that is not a data URL', [{ type: 'file', file: { file_data: 'JVBERi0xLjQK' } }], 'messages[0].content[0].file.file_data'],
    [
      'a file type Anthropic cannot read',
      [{ type: 'file', file: { file_data: 'data:application/zip;base64,UEsDBA==' } }],
      'messages[0].content[0].file.file_data',
    ],
    ['a file part without data', [{ type: 'file', file: { filename: 'a.pdf' } }], 'messages[0].content[0].file.file_data'],
  ])('refuses %s (400)', (_what, content, param) => {
    const error = refusal(() => buildAnthropicBody(target(), body([user(content)]), false));
    expect(error).toBeInstanceOf(InvalidValueError);
    expect(error.param).toBe(param);
  });

  it('refuses a content part type it has no block for (422), and non-text parts where Anthropic takes text only (400)', () => {
    const audio = refusal(() => buildAnthropicBody(target(), body([user([{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }])]), false));
    expect(audio).toMatchObject({ status: 422, param: 'messages[0].content[0].type' });
    const image = { type: 'image_url', image_url: { url: 'https://example.com/a.png' } };
    const inSystem = refusal(() => buildAnthropicBody(target(), body([{ role: 'system', content: [image] }, user('hi')]), false));
    expect(inSystem).toMatchObject({ status: 400, param: 'messages[0].content[0].type' });
    const inAssistant = refusal(() => buildAnthropicBody(target(), body([user('hi'), { role: 'assistant', content: [image] }]), false));
    expect(inAssistant).toMatchObject({ status: 400, param: 'messages[1].content[0].type' });
  });

  it('refuses a thinking block without its signature, and a redacted one without data', () => {
    const unsigned = refusal(() =>
      buildAnthropicBody(target(), body([user('hi'), { role: 'assistant', content: 'ok', thinking_blocks: [{ type: 'thinking', thinking: 'hm' }] }]), false),
    );
    expect(unsigned).toMatchObject({ status: 400, param: 'messages[1].thinking_blocks[0]' });
    const empty = refusal(() =>
      buildAnthropicBody(target(), body([user('hi'), { role: 'assistant', content: 'ok', thinking_blocks: [{ type: 'redacted_thinking' }] }]), false),
    );
    expect(empty).toMatchObject({ status: 400, param: 'messages[1].thinking_blocks[0]' });
  });

  it('refuses json_schema without a schema', () => {
    const error = refusal(() =>
      buildAnthropicBody(target(), body([user('hi')], { response_format: { type: 'json_schema', json_schema: { name: 'x' } } }), false),
    );
    expect(error).toMatchObject({ status: 400, param: 'response_format.json_schema.schema' });
  });
});
