import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ModelOf } from '../../../../src/providers/model.ts';
import { providerCannotServe } from '../../../../src/operations/chat/provider-support.ts';
import { ChatCompletionRequestSchema } from '../../../../src/operations/chat/request-schema.ts';
import { geminiDescriptor } from '../../../../src/providers/gemini/descriptor.ts';
import { THINKING_BUDGETS, THINKING_LEVELS, buildGeminiBody, buildGeminiCall } from '../../../../src/providers/gemini/request.ts';
import type { ChatRequest } from '../../../../src/wire/openai-chat.ts';
import { GEMINI_FIXTURES_DIR, GEMINI_FIXTURE_MODEL } from '../../../helpers/fake-gemini.ts';
import { targetFor } from '../../../helpers/provider-calls.ts';
import { gatewayError as refusal } from '../../../helpers/gateway-errors.ts';
import type { ReasoningEffort } from '../../../../src/providers/descriptor.ts';

type Model = ModelOf<typeof geminiDescriptor>;

interface RequestFixture {
  description: string;
  model?: Partial<Model>;
  stream: boolean;
  openai: ChatRequest;
  upstream: unknown;
}

const DIR = `${GEMINI_FIXTURES_DIR}requests/`;
const fixtures = readdirSync(DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => [file.replace(/\.json$/, ''), JSON.parse(readFileSync(DIR + file, 'utf8')) as RequestFixture] as const);

const doorChecker = TypeCompiler.Compile(ChatCompletionRequestSchema);
const user = (content: string): ChatRequest['messages'][number] => ({ role: 'user', content });

function target(model: Partial<Model> = {}, apiKey: string | null = 'test-key') {
  return targetFor<Model>({ ...GEMINI_FIXTURE_MODEL, ...model }, apiKey, 'gemini-alias');
}

function body(request: Partial<ChatRequest> & Record<string, unknown>, model: Partial<Model> = {}) {
  return buildGeminiBody(target(model), { messages: [user('Hi')], ...request });
}

describe('gemini request fixtures', () => {
  it('covers the cases the adapter documents', () => {
    expect(fixtures.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'text',
        'system-and-developer',
        'multi-turn',
        'tool-results',
        'thought-signature-carried',
        'images',
        'audio',
        'json-schema',
        'json-object',
        'generation-config',
        'reasoning-budget',
        'reasoning-level',
        'schema-cleanup',
        'stream',
      ]),
    );
    expect(fixtures.filter(([name]) => name.startsWith('tools-and-tool-choice-'))).toHaveLength(4);
  });

  it.each(fixtures)('%s: translates to the recorded upstream body', (_name, fixture) => {
    expect(buildGeminiBody(target(fixture.model), fixture.openai)).toEqual(fixture.upstream);
  });

  it.each(fixtures)('%s: is a request the door accepts for a Gemini model', (_name, fixture) => {
    const request = { model: 'svc-flash', stream: fixture.stream, ...fixture.openai };
    expect(doorChecker.Check(request)).toBe(true);
    expect(providerCannotServe(request, geminiDescriptor, 'svc-flash')).toBeUndefined();
  });
});

describe('gemini call address', () => {
  it('posts to generateContent on the public endpoint with the key header', () => {
    const call = buildGeminiCall(target({}, 'AIza-test'), { messages: [user('Hi')] }, false);
    expect(call.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-test-flash:generateContent');
    expect(call.headers).toEqual({ 'content-type': 'application/json', 'x-goog-api-key': 'AIza-test' });
    expect(JSON.parse(call.body)).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
  });

  it('streams from streamGenerateContent?alt=sse on base_url, the model encoded as one path segment', () => {
    const call = buildGeminiCall(target({ base_url: 'http://127.0.0.1:9/', upstream_model: 'tuned/model v1' }), { messages: [user('Hi')] }, true);
    expect(call.url).toBe('http://127.0.0.1:9/v1beta/models/tuned%2Fmodel%20v1:streamGenerateContent?alt=sse');
  });

  it.each([null, ''])('sends no key header when the key is %j', (apiKey) => {
    expect(buildGeminiCall(target({}, apiKey), { messages: [user('Hi')] }, false).headers).toEqual({ 'content-type': 'application/json' });
  });
});

describe('gemini messages', () => {
  it('leaves out a turn with nothing in it, and merges the turns around it', () => {
    const messages: ChatRequest['messages'] = [user('One'), { role: 'assistant', content: '' }, user('Two'), { role: 'assistant', content: null }];
    expect(body({ messages }).contents).toEqual([{ role: 'user', parts: [{ text: 'One' }, { text: 'Two' }] }]);
  });

  it('sends an assistant refusal part as text', () => {
    const messages: ChatRequest['messages'] = [user('Hi'), { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] }];
    expect(body({ messages }).contents[1]).toEqual({ role: 'model', parts: [{ text: 'I cannot help with that.' }] });
  });

  it('encodes a plain (not base64) data URL', () => {
    const messages: ChatRequest['messages'] = [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:text/plain,hello%20world' } }] }];
    expect(body({ messages }).contents[0]?.parts).toEqual([{ inlineData: { mimeType: 'text/plain', data: Buffer.from('hello world').toString('base64') } }]);
  });

  it.each([
    ['https://x.test/a.PNG', 'image/png'],
    ['https://x.test/a.jpg#frag', 'image/jpeg'],
    ['https://x.test/a.jpeg', 'image/jpeg'],
    ['https://x.test/a.gif', 'image/gif'],
    ['https://x.test/a.heic', 'image/heic'],
    ['https://x.test/a.heif?x=1', 'image/heif'],
    ['http://x.test/a.bmp', 'image/jpeg'],
  ])('guesses the media type of %s as %s', (url, mimeType) => {
    const messages: ChatRequest['messages'] = [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }];
    expect(body({ messages }).contents[0]?.parts).toEqual([{ fileData: { mimeType, fileUri: url } }]);
  });

  it('wraps a tool result that is JSON but not an object in {content}', () => {
    const messages: ChatRequest['messages'] = [
      user('List'),
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '[1, 2]' },
    ];
    expect(body({ messages }).contents[2]).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'list', response: { content: '[1, 2]' } } }] });
  });

  it('names a tool result after the nearest earlier assistant message holding its call id', () => {
    const messages: ChatRequest['messages'] = [
      user('Go'),
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'first', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'second', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c2', content: 'done' },
      { role: 'tool', tool_call_id: 'c1', content: 'late' },
    ];
    const names = body({ messages })
      .contents.at(-1)
      ?.parts.map((part) => ('functionResponse' in part ? part.functionResponse.name : null));
    expect(names).toEqual(['second', 'first']);
  });

  it('refuses a tool result whose call id no earlier assistant message holds', () => {
    const messages: ChatRequest['messages'] = [user('Go'), { role: 'tool', tool_call_id: 'nope', content: 'x' }];
    expect(refusal(() => body({ messages }))).toMatchObject({ status: 400, code: 'invalid_value', param: 'messages[1].tool_call_id' });
  });

  it.each([
    ['not json', '{"city": '],
    ['not an object', '["Paris"]'],
  ])('refuses tool call arguments that are %s', (_why, args) => {
    const messages: ChatRequest['messages'] = [
      user('Go'),
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: args } }] },
    ];
    expect(refusal(() => body({ messages }))).toMatchObject({ status: 400, code: 'invalid_value', param: 'messages[1].tool_calls[0].function.arguments' });
  });

  it('refuses the deprecated function role', () => {
    const messages: ChatRequest['messages'] = [user('Go'), { role: 'function', name: 'f', content: '1' }];
    expect(refusal(() => body({ messages }))).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'messages[1].role' });
  });

  it('refuses a file given only by an OpenAI file id', () => {
    const messages: ChatRequest['messages'] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Read' },
          { type: 'file', file: { file_id: 'file-abc' } },
        ],
      },
    ];
    const error = refusal(() => body({ messages }));
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'messages[0].content[1].file.file_id' });
    expect(error.message).toContain('gemini-alias');
  });

  it.each([
    ['an image URL of another scheme', { type: 'image_url', image_url: { url: 'ftp://x.test/a.png' } }, 'messages[0].content[0].image_url.url'],
    ['a data URL without a media type', { type: 'image_url', image_url: { url: 'data:;base64,AAAA' } }, 'messages[0].content[0].image_url.url'],
    ['file_data that is not a data URL', { type: 'file', file: { file_data: 'JVBERi0x' } }, 'messages[0].content[0].file.file_data'],
    ['a file part without data', { type: 'file', file: { filename: 'a.pdf' } }, 'messages[0].content[0].file'],
  ])('refuses %s', (_why, part, param) => {
    const messages = [{ role: 'user', content: [part] }] as ChatRequest['messages'];
    expect(refusal(() => body({ messages }))).toMatchObject({ status: 400, code: 'invalid_value', param });
  });

  it('refuses a content part type Gemini has no part for', () => {
    const messages: ChatRequest['messages'] = [{ role: 'user', content: [{ type: 'video_url' }] }];
    expect(refusal(() => body({ messages }))).toMatchObject({ status: 422, param: 'messages[0].content[0].type' });
  });

  it('refuses a non-text part in a system message', () => {
    const messages = [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] }, user('Hi')] as ChatRequest['messages'];
    expect(refusal(() => body({ messages }))).toMatchObject({ status: 400, param: 'messages[0].content[0].type' });
  });
});

describe('gemini generation config', () => {
  it('sends no generationConfig, tools or toolConfig when nothing applies', () => {
    expect(body({ n: 1, user: 'u1', response_format: { type: 'text' }, tool_choice: 'auto' })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    });
  });

  it('takes max_tokens when max_completion_tokens is absent, and ignores nulls', () => {
    expect(body({ max_tokens: 77, temperature: null, top_p: null, stop: null, seed: null, top_k: null }).generationConfig).toEqual({ maxOutputTokens: 77 });
  });

  it('sends json_schema without a schema as the JSON media type only', () => {
    expect(body({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }).generationConfig).toEqual({ responseMimeType: 'application/json' });
  });

  it('takes the penalties, and ignores them as null', () => {
    expect(body({ presence_penalty: 0.5, frequency_penalty: -1 }).generationConfig).toEqual({ presencePenalty: 0.5, frequencyPenalty: -1 });
    expect(body({ presence_penalty: null, frequency_penalty: null }).generationConfig).toBeUndefined();
  });
});

describe('gemini reasoning', () => {
  it.each(Object.entries({ none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576, xhigh: 32768 }))(
    'budget models: %s → thinkingBudget %i',
    (effort, budget) => {
      expect(THINKING_BUDGETS[effort as ReasoningEffort]).toBe(budget);
      const expected = budget > 0 ? { thinkingBudget: budget, includeThoughts: true } : { thinkingBudget: 0 };
      expect(body({ reasoning_effort: effort }).generationConfig?.thinkingConfig).toEqual(expected);
      expect(body({ reasoning_effort: effort }, { thinking: 'budget' }).generationConfig?.thinkingConfig).toEqual(expected);
    },
  );

  it.each(Object.entries({ none: 'minimal', minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'high' }))(
    'level models: %s → thinkingLevel %s',
    (effort, level) => {
      expect(THINKING_LEVELS[effort as ReasoningEffort]).toBe(level);
      expect(body({ reasoning_effort: effort }, { thinking: 'level' }).generationConfig?.thinkingConfig).toEqual({
        thinkingLevel: level,
        includeThoughts: true,
      });
    },
  );

  it("uses the model's default effort, which the request's overrides", () => {
    expect(body({}, { reasoning_effort: 'low' }).generationConfig?.thinkingConfig).toEqual({ thinkingBudget: 1024, includeThoughts: true });
    expect(body({ reasoning_effort: 'high' }, { reasoning_effort: 'low' }).generationConfig?.thinkingConfig).toEqual({
      thinkingBudget: 24576,
      includeThoughts: true,
    });
    expect(body({}).generationConfig).toBeUndefined();
  });

  it('refuses an unknown effort', () => {
    expect(refusal(() => body({ reasoning_effort: 'extreme' }))).toMatchObject({ status: 400, code: 'invalid_value', param: 'reasoning_effort' });
    expect(refusal(() => body({ reasoning_effort: 'toString' }))).toMatchObject({ param: 'reasoning_effort' });
  });
});
