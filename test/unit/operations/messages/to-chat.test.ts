import { describe, expect, it } from 'vitest';
import type Anthropic from '@anthropic-ai/sdk';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ModelOf } from '../../../../src/providers/model.ts';
import type { anthropicDescriptor } from '../../../../src/providers/anthropic/descriptor.ts';
import { buildAnthropicBody } from '../../../../src/providers/anthropic/request.ts';
import { messagesToChat } from '../../../../src/operations/messages/to-chat.ts';
import { ChatRequestSchema, type ChatMessage } from '../../../../src/wire/openai-chat.ts';
import { ANTHROPIC_FIXTURE_MODEL } from '../../../helpers/fake-anthropic.ts';
import { targetFor } from '../../../helpers/provider-calls.ts';
import { admitted, gatewayError, type LegacySampling } from './helpers.ts';

type Params = Anthropic.Messages.MessageCreateParams & LegacySampling;
type Turn = Anthropic.Messages.MessageParam;

const PNG = 'iVBORw0KGgo=';
const PDF = 'JVBERi0xLjQK';
const chatChecker = TypeCompiler.Compile(ChatRequestSchema);

function request(messages: Turn[], fields: Partial<Params> = {}): Params {
  return { model: 'claude-test', max_tokens: 1024, messages, ...fields };
}

/** The chat request of an SDK-typed request; checks it against the chat schema workers take. */
function chatOf(params: Params) {
  const { chat } = messagesToChat(admitted(params));
  expect(chatChecker.Errors(chat).First()).toBeUndefined();
  return chat;
}

const messagesOf = (messages: Turn[], fields: Partial<Params> = {}): ChatMessage[] => chatOf(request(messages, fields)).messages;
const hi: Turn = { role: 'user', content: 'hi' };

describe('messagesToChat: the request', () => {
  it('keeps the model and the delivery, and copies max_tokens and sampling', () => {
    const translated = messagesToChat(admitted(request([hi], { stream: true, temperature: 0.2, top_p: 0.8, top_k: 5 })));
    expect(translated).toEqual({
      model: 'claude-test',
      stream: true,
      chat: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 1024, temperature: 0.2, top_p: 0.8, top_k: 5 },
    });
    expect(messagesToChat(admitted(request([hi]))).stream).toBe(false);
  });

  it('sends stop_sequences as stop and metadata.user_id as user', () => {
    expect(chatOf(request([hi], { stop_sequences: ['END', 'STOP'], metadata: { user_id: 'u-42' } }))).toMatchObject({ stop: ['END', 'STOP'], user: 'u-42' });
    const chat = chatOf(request([hi], { stop_sequences: [], metadata: { user_id: null } }));
    expect(chat).not.toHaveProperty('stop');
    expect(chat).not.toHaveProperty('user');
  });

  it('sends output_config.format as a strict json_schema response_format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    expect(chatOf(request([hi], { output_config: { format: { type: 'json_schema', schema } } })).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema, strict: true },
    });
  });
});

describe('messagesToChat: system', () => {
  it('puts a string system prompt in a leading system message', () => {
    expect(messagesOf([hi], { system: 'Be brief.' })).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('keeps the cache markers of system text blocks', () => {
    const system: Anthropic.Messages.TextBlockParam[] = [
      { type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'Today.' },
    ];
    expect(messagesOf([hi], { system })[0]).toEqual({
      role: 'system',
      content: [
        { type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral', ttl: '1h' } },
        { type: 'text', text: 'Today.' },
      ],
    });
  });

  it('sends no system message for an empty system prompt', () => {
    expect(messagesOf([hi], { system: '' })).toEqual([{ role: 'user', content: 'hi' }]);
    expect(messagesOf([hi], { system: [] })).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('keeps a system turn where it is among the turns', () => {
    const turns: Turn[] = [hi, { role: 'system', content: [{ type: 'text', text: 'Now in French.' }] }, { role: 'user', content: 'encore' }];
    expect(messagesOf(turns)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'system', content: [{ type: 'text', text: 'Now in French.' }] },
      { role: 'user', content: 'encore' },
    ]);
  });
});

describe('messagesToChat: user turns', () => {
  it('translates text (with its cache marker), base64 and URL images', () => {
    const turn: Turn = {
      role: 'user',
      content: [
        { type: 'text', text: 'Compare', cache_control: { type: 'ephemeral' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/b.jpg' }, cache_control: { type: 'ephemeral' } },
      ],
    };
    expect(messagesOf([turn])).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare', cache_control: { type: 'ephemeral' } },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/b.jpg' }, cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
  });

  it('sends a base64 PDF as a file part with a data URL and a .pdf filename, plain text and block documents as text', () => {
    const turn: Turn = {
      role: 'user',
      content: [
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'report.pdf' },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Q3 results' },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain words.' }, cache_control: { type: 'ephemeral' } },
        {
          type: 'document',
          source: {
            type: 'content',
            content: [
              { type: 'text', text: 'Part one.' },
              { type: 'image', source: { type: 'url', url: 'https://example.com/c.png' } },
            ],
          },
        },
        { type: 'document', source: { type: 'content', content: 'Inline.' } },
      ],
    };
    expect(messagesOf([turn])[0]?.content).toEqual([
      { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'report.pdf' } },
      { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'Q3 results.pdf' } },
      { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'document.pdf' } },
      { type: 'text', text: 'Plain words.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Part one.' },
      { type: 'image_url', image_url: { url: 'https://example.com/c.png' } },
      { type: 'text', text: 'Inline.' },
    ]);
  });

  it('sends each tool result as a tool message, before the rest of the turn', () => {
    const turn: Turn = {
      role: 'user',
      content: [
        { type: 'text', text: 'Here you go.' },
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_2',
          content: [
            { type: 'text', text: 'line 1' },
            { type: 'text', text: 'line 2' },
          ],
        },
      ],
    };
    expect(messagesOf([turn])).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'line 1\nline 2' },
      { role: 'user', content: [{ type: 'text', text: 'Here you go.' }] },
    ]);
  });

  it('says in the text that a tool result is an error, and sends no user message for a turn of results only', () => {
    const turn: Turn = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'file not found', is_error: true },
        { type: 'tool_result', tool_use_id: 'toolu_2' },
      ],
    };
    expect(messagesOf([turn])).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Error: file not found' },
      { role: 'tool', tool_call_id: 'toolu_2', content: '' },
    ]);
  });

  it("keeps a tool result's cache marker on a text part", () => {
    const turn: Turn = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok', cache_control: { type: 'ephemeral' } }] };
    expect(messagesOf([turn])).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: [{ type: 'text', text: 'ok', cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('moves the images of a tool result into the user message after the tool messages', () => {
    const turn: Turn = {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content: [
            { type: 'text', text: 'screenshot:' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
        { type: 'text', text: 'What do you see?' },
      ],
    };
    expect(messagesOf([turn])).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: 'screenshot:' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'text', text: 'What do you see?' },
        ],
      },
    ]);
  });
});

describe('messagesToChat: assistant turns', () => {
  it('sends text as content and tool_use blocks as tool calls with JSON arguments', () => {
    const turn: Turn = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: 2 } },
        { type: 'tool_use', id: 'toolu_2', name: 'now', input: {} },
      ],
    };
    expect(messagesOf([hi, turn])[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Checking.' }],
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","days":2}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'now', arguments: '{}' } },
      ],
    });
  });

  it('sends null content when the turn only calls tools, and a string prefill as it is', () => {
    const calls: Turn = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'now', input: {} }] };
    expect(messagesOf([hi, calls])[1]).toMatchObject({ role: 'assistant', content: null });
    expect(messagesOf([hi, { role: 'assistant', content: 'The answer is (' }])[1]).toEqual({ role: 'assistant', content: 'The answer is (' });
  });

  it('sends thinking blocks as thinking_blocks, their text as reasoning_content', () => {
    const turn: Turn = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'First.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'thinking', thinking: 'Second.', signature: 'sig-2' },
        { type: 'text', text: 'Done.' },
      ],
    };
    expect(messagesOf([hi, turn])[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Done.' }],
      thinking_blocks: [
        { type: 'thinking', thinking: 'First.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'thinking', thinking: 'Second.', signature: 'sig-2' },
      ],
      reasoning_content: 'First.\n\nSecond.',
    });
  });

  it('sends no reasoning_content when the thinking carries no text', () => {
    const turn: Turn = {
      role: 'assistant',
      content: [
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Done.' },
      ],
    };
    expect(messagesOf([hi, turn])[1]).not.toHaveProperty('reasoning_content');
  });
});

describe('messagesToChat: tools', () => {
  it('sends client tools as function tools, with cache marker and strict', () => {
    const chat = chatOf(
      request([hi], {
        tools: [
          {
            name: 'get_weather',
            description: 'The weather',
            input_schema: { type: 'object', properties: { city: { type: 'string' } } },
            cache_control: { type: 'ephemeral' },
            strict: true,
          },
          { type: 'custom', name: 'now', input_schema: { type: 'object' } },
        ],
      }),
    );
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true },
        cache_control: { type: 'ephemeral' },
      },
      { type: 'function', function: { name: 'now', parameters: { type: 'object' } } },
    ]);
    expect(chat).not.toHaveProperty('tool_choice');
  });

  it.each([
    [{ type: 'auto' }, 'auto'],
    [{ type: 'any' }, 'required'],
    [{ type: 'none' }, 'none'],
    [
      { type: 'tool', name: 'now' },
      { type: 'function', function: { name: 'now' } },
    ],
  ] as const)('sends tool_choice %j as %j', (choice, expected) => {
    const chat = chatOf(request([hi], { tools: [{ name: 'now', input_schema: { type: 'object' } }], tool_choice: choice }));
    expect(chat.tool_choice).toEqual(expected);
    expect(chat).not.toHaveProperty('parallel_tool_calls');
  });

  it('sends disable_parallel_tool_use as parallel_tool_calls false', () => {
    const chat = chatOf(
      request([hi], { tools: [{ name: 'now', input_schema: { type: 'object' } }], tool_choice: { type: 'any', disable_parallel_tool_use: true } }),
    );
    expect(chat).toMatchObject({ tool_choice: 'required', parallel_tool_calls: false });
  });

  it('drops a tool_choice without tools', () => {
    const chat = chatOf(request([hi], { tool_choice: { type: 'none' } }));
    expect(chat).not.toHaveProperty('tool_choice');
    expect(chat).not.toHaveProperty('tools');
  });

  it('refuses a server tool with 422 unsupported_parameter naming it', () => {
    const params = request([hi], {
      tools: [
        { name: 'now', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
    });
    const error = gatewayError(() => messagesToChat(admitted(params)));
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'tools[1]' });
    expect(error.message).toContain('web_search_20250305');
  });
});

describe('messagesToChat: thinking', () => {
  it.each([
    [1024, 'low'],
    [4095, 'low'],
    [4096, 'medium'],
    [16383, 'medium'],
    [16384, 'high'],
    [64000, 'high'],
  ])('sends a budget of %i tokens as reasoning_effort %s', (budget, effort) => {
    expect(chatOf(request([hi], { max_tokens: 100000, thinking: { type: 'enabled', budget_tokens: budget } })).reasoning_effort).toBe(effort);
  });

  it('sends adaptive thinking with output_config.effort as that effort (max as xhigh)', () => {
    expect(chatOf(request([hi], { thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } })).reasoning_effort).toBe('medium');
    expect(chatOf(request([hi], { thinking: { type: 'adaptive', display: 'omitted' }, output_config: { effort: 'max' } })).reasoning_effort).toBe('xhigh');
    expect(chatOf(request([hi], { output_config: { effort: 'xhigh' } })).reasoning_effort).toBe('xhigh');
  });

  it('sends no reasoning_effort for disabled thinking or adaptive thinking without effort', () => {
    expect(chatOf(request([hi], { thinking: { type: 'disabled' }, output_config: { effort: 'high' } }))).not.toHaveProperty('reasoning_effort');
    expect(chatOf(request([hi], { thinking: { type: 'adaptive' } }))).not.toHaveProperty('reasoning_effort');
  });
});

describe('messagesToChat: what chat cannot express', () => {
  const userTurn = (...content: Anthropic.Messages.ContentBlockParam[]): Turn => ({ role: 'user', content });
  const CASES: Array<[string, Turn[], string]> = [
    [
      'an image by Files API id',
      [userTurn({ type: 'text', text: 'x' }, { type: 'image', source: { type: 'file', file_id: 'file_1' } })],
      'messages[0].content[1].source',
    ],
    [
      'a document by URL',
      [hi, { role: 'assistant', content: 'ok' }, userTurn({ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } })],
      'messages[2].content[0].source',
    ],
    ['a document by Files API id', [userTurn({ type: 'document', source: { type: 'file', file_id: 'file_1' } })], 'messages[0].content[0].source'],
    ['a search_result block', [userTurn({ type: 'search_result', source: 's', title: 't', content: [{ type: 'text', text: 'x' }] })], 'messages[0].content[0]'],
    ['a thinking block in a user turn', [userTurn({ type: 'thinking', thinking: 'x', signature: 's' })], 'messages[0].content[0]'],
    [
      'a server tool call in an assistant turn',
      [hi, { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }] }],
      'messages[1].content[0]',
    ],
    [
      'a tool_reference inside a tool result',
      [
        userTurn({
          type: 'tool_result',
          tool_use_id: 't1',
          content: [
            { type: 'text', text: 'x' },
            { type: 'tool_reference', tool_name: 'f' },
          ],
        }),
      ],
      'messages[0].content[0].content[1]',
    ],
  ];

  it.each(CASES)('%s: 422 unsupported_parameter naming its Anthropic path', (_name, messages, param) => {
    const error = gatewayError(() => messagesToChat(admitted(request(messages))));
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param });
    expect(error.message).toContain("'claude-test'");
  });

  it('refuses a block other than text in a system turn with 400 invalid_value', () => {
    const image = { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } };
    const error = gatewayError(() =>
      messagesToChat({
        model: 'm',
        max_tokens: 1,
        messages: [
          { role: 'system', content: [image] },
          { role: 'user', content: 'hi' },
        ],
      }),
    );
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'messages[0].content[0].type' });
  });
});

describe('messagesToChat, then the Anthropic adapter', () => {
  it('gives back the request a Claude Code-like client sent', () => {
    const params = request(
      [
        { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?', cache_control: { type: 'ephemeral' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Call the tool.', signature: 'sig' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
      ],
      {
        max_tokens: 16000,
        system: [{ type: 'text', text: 'You are a weather bot.', cache_control: { type: 'ephemeral' } }],
        tools: [
          {
            name: 'get_weather',
            description: 'Weather',
            input_schema: { type: 'object', properties: { city: { type: 'string' } } },
            cache_control: { type: 'ephemeral' },
          },
        ],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        thinking: { type: 'enabled', budget_tokens: 8192 },
        stop_sequences: ['END'],
        temperature: 1,
        metadata: { user_id: 'u-1' },
      },
    );
    const { chat } = messagesToChat(admitted(params));
    const target = targetFor<ModelOf<typeof anthropicDescriptor>>({ ...ANTHROPIC_FIXTURE_MODEL, upstream_model: 'claude-test' }, 'sk-ant-test');
    expect(buildAnthropicBody(target, chat, false)).toEqual(params);
  });
});
