import { describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { Value } from '@sinclair/typebox/value';
import { responsesToChat } from '../../../../src/operations/responses/to-chat.ts';
import { ResponsesRequestSchema, type ResponsesRequest } from '../../../../src/wire/openai-responses.ts';
import { ChatRequestSchema } from '../../../../src/wire/openai-chat.ts';
import { GatewayError } from '../../../../src/errors/gateway-error.ts';

const MODEL = 'svc-standard';

/** An SDK-typed request, checked against the door's schema before it is translated. */
function translate(params: Omit<OpenAI.Responses.ResponseCreateParams, 'model'>) {
  const request = { model: MODEL, ...params };
  expect(Value.Check(ResponsesRequestSchema, request), JSON.stringify([...Value.Errors(ResponsesRequestSchema, request)][0])).toBe(true);
  const translated = responsesToChat(request as ResponsesRequest);
  expect(Value.Check(ChatRequestSchema, translated.chat)).toBe(true);
  return translated;
}

/** The GatewayError a request (not necessarily SDK-typed: clients send what they like) is refused with. */
function refusal(request: Record<string, unknown>): GatewayError {
  try {
    responsesToChat({ model: MODEL, ...request });
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected the request to be refused');
}

describe('responsesToChat: the frame', () => {
  it('turns a string input into one user message and keeps the model', () => {
    expect(translate({ input: 'Hello' })).toEqual({ model: MODEL, stream: false, chat: { messages: [{ role: 'user', content: 'Hello' }] } });
  });

  it('streams only when stream is true', () => {
    expect(translate({ input: 'Hi', stream: true }).stream).toBe(true);
    expect(translate({ input: 'Hi', stream: null }).stream).toBe(false);
  });

  it('puts instructions first, as a system message, before system messages of the input', () => {
    const { chat } = translate({
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Use French.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: 'Use French.' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('maps the settings: max_output_tokens, temperature, top_p, parallel_tool_calls, reasoning.effort, user', () => {
    const { chat } = translate({
      input: 'Hi',
      max_output_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      reasoning: { effort: 'low', summary: 'auto' },
      user: 'u-1',
      metadata: { team: 'search' },
      store: true,
      include: ['reasoning.encrypted_content'],
      truncation: 'auto',
      prompt_cache_key: 'k',
      service_tier: 'flex',
      text: { verbosity: 'low' },
    });
    expect(chat).toEqual({
      messages: [{ role: 'user', content: 'Hi' }],
      max_completion_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      reasoning_effort: 'low',
      user: 'u-1',
    });
  });

  it('ignores max_tool_calls, which bounds hosted tools (none are served)', () => {
    expect(responsesToChat({ model: MODEL, input: 'Hi', max_tool_calls: 3 }).chat).toEqual({ messages: [{ role: 'user', content: 'Hi' }] });
  });

  it('prefers safety_identifier to user', () => {
    expect(translate({ input: 'Hi', user: 'u-1', safety_identifier: 'hashed-user' }).chat.user).toBe('hashed-user');
  });

  it('leaves null settings out', () => {
    const { chat } = translate({
      input: 'Hi',
      temperature: null,
      top_p: null,
      max_output_tokens: null,
      reasoning: { effort: null },
      parallel_tool_calls: null,
      instructions: null,
    });
    expect(chat).toEqual({ messages: [{ role: 'user', content: 'Hi' }] });
  });
});

describe('responsesToChat: what it cannot serve', () => {
  it.each([
    ['conversation', { conversation: 'conv_1' }, /keeps no conversations: continue one with 'previous_response_id'.*'conversation'/],
    ['conversation', { conversation: { id: 'conv_1' } }, /'conversation'/],
    ['prompt', { prompt: { id: 'pmpt_1', version: '2' } }, /Prompt templates stored at OpenAI \('prompt'\)/],
  ])('refuses %s with a 400 invalid_value that says what to do', (param, fields, message) => {
    const error = refusal({ input: 'Hi', ...fields });
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param });
    expect(error.message).toMatch(message);
  });

  it('accepts null previous_response_id and conversation, background false, and store true', () => {
    expect(translate({ input: 'Hi', previous_response_id: null, conversation: null, background: false, store: true }).chat.messages).toHaveLength(1);
  });

  // The web tier resolves references and earlier turns (conversation.ts) before translating.
  it('refuses an item reference left unresolved, with or without its type', () => {
    for (const item of [{ type: 'item_reference', id: 'msg_1' }, { id: 'msg_1' }]) {
      expect(refusal({ input: [{ role: 'user', content: 'Hi' }, item] })).toMatchObject({ status: 400, code: 'invalid_value', param: 'input[1]' });
    }
  });

  it('refuses top_logprobs above 0 (log probabilities are not returned)', () => {
    expect(refusal({ input: 'Hi', top_logprobs: 5 })).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'top_logprobs' });
    expect(translate({ input: 'Hi', top_logprobs: 0 }).chat).toEqual({ messages: [{ role: 'user', content: 'Hi' }] });
  });

  it('needs an input with a message in it', () => {
    expect(refusal({ instructions: 'Be brief.' })).toMatchObject({ status: 400, code: 'missing_required_field', param: 'input' });
    expect(refusal({ input: [] })).toMatchObject({ status: 400, code: 'invalid_value', param: 'input' });
  });
});

describe('responsesToChat: message items', () => {
  it('maps roles, with or without type message', () => {
    const { chat } = translate({
      input: [
        { type: 'message', role: 'system', content: 'S' },
        { role: 'developer', content: 'D' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'U' }] },
        { role: 'assistant', content: 'A' },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'developer', content: 'D' },
      { role: 'user', content: [{ type: 'text', text: 'U' }] },
      { role: 'assistant', content: 'A' },
    ]);
  });

  it('maps input_image by URL, with its detail (original as high)', () => {
    const { chat } = translate({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'original' },
          ],
        },
      ],
    });
    expect(chat.messages[0]?.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'high' } },
    ]);
  });

  it('maps input_file with file_data to a file part', () => {
    const { chat } = translate({
      input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' }] }],
    });
    expect(chat.messages[0]?.content).toEqual([{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } }]);
  });

  it.each([
    [
      'an image by file_id',
      { type: 'input_image', file_id: 'file-1', detail: 'auto' },
      'input[1].content[0].file_id',
      422,
      'unsupported_parameter',
      /no files API/,
    ],
    ['a file by file_id', { type: 'input_file', file_id: 'file-1' }, 'input[1].content[0].file_id', 422, 'unsupported_parameter', /no files API/],
    ['a file by URL', { type: 'input_file', file_url: 'https://example.com/a.pdf' }, 'input[1].content[0].file_url', 422, 'unsupported_parameter', /file_data/],
    ['an image without a source', { type: 'input_image', detail: 'auto' }, 'input[1].content[0].image_url', 400, 'missing_required_field', /image_url/],
    ['a file without a source', { type: 'input_file', filename: 'a.pdf' }, 'input[1].content[0].file_data', 400, 'missing_required_field', /file_data/],
    ['a refusal in a user message', { type: 'refusal', refusal: 'No.' }, 'input[1].content[0].type', 400, 'invalid_value', /'refusal'/],
    ['an unknown part', { type: 'input_video', url: 'x' }, 'input[1].content[0].type', 400, 'invalid_value', /'input_video'/],
  ])('refuses %s, naming it as the client sent it', (_what, part, param, status, code, message) => {
    const error = refusal({
      input: [
        { role: 'user', content: 'Hi' },
        { role: 'user', content: [part] },
      ],
    });
    expect(error).toMatchObject({ status, code, param });
    expect(error.message).toMatch(message);
  });

  it("joins an assistant's output_text parts into its content and its refusal parts into refusal", () => {
    const { chat } = translate({
      input: [
        { role: 'user', content: 'Hi' },
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [
            { type: 'output_text', text: 'Hello ', annotations: [] },
            { type: 'output_text', text: 'there.', annotations: [] },
          ],
        },
        { type: 'message', id: 'msg_2', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal: 'I cannot.' }] },
      ],
    });
    expect(chat.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Hello there.' },
      { role: 'assistant', content: null, refusal: 'I cannot.' },
    ]);
  });

  it('refuses an image in an assistant message', () => {
    const error = refusal({ input: [{ role: 'assistant', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }] });
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'input[0].content[0].type' });
  });

  it('names a missing role or content', () => {
    expect(refusal({ input: [{ content: 'Hi' }] })).toMatchObject({ status: 400, code: 'missing_required_field', param: 'input[0].role' });
    expect(refusal({ input: [{ type: 'message', role: 'user' }] })).toMatchObject({ status: 400, code: 'missing_required_field', param: 'input[0].content' });
    expect(refusal({ input: [{ role: 'user', content: [{ type: 'input_text' }] }] })).toMatchObject({
      code: 'missing_required_field',
      param: 'input[0].content[0].text',
    });
  });
});

describe('responsesToChat: function calls', () => {
  const call = (id: string, name = 'get_weather') => ({ type: 'function_call' as const, call_id: id, name, arguments: `{"city":"${id}"}` });
  const toolCall = (id: string, name = 'get_weather') => ({ id, type: 'function', function: { name, arguments: `{"city":"${id}"}` } });

  it('joins consecutive function_call items into one assistant message, and answers each with a tool message', () => {
    const { chat } = translate({
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { ...call('call_1'), id: 'fc_1', status: 'completed' },
        call('call_2'),
        { type: 'function_call_output', call_id: 'call_1', output: '{"temp":21}' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: '{"temp":25}' }] },
      ],
    });
    expect(chat.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [toolCall('call_1'), toolCall('call_2')] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '{"temp":25}' }] },
    ]);
  });

  it("puts function calls that follow an assistant message on that message, as chat's one assistant turn", () => {
    const { chat } = translate({ input: [{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: 'Let me check.' }, call('call_1')] });
    expect(chat.messages[1]).toEqual({ role: 'assistant', content: 'Let me check.', tool_calls: [toolCall('call_1')] });
  });

  it('starts a new assistant message after anything else', () => {
    const { chat } = translate({
      input: [
        { role: 'user', content: 'A' },
        call('call_1'),
        { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
        call('call_2'),
        { role: 'user', content: 'B' },
        call('call_3'),
      ],
    });
    expect(chat.messages.map((message) => [message.role, message.tool_calls?.map((c) => c.id)])).toEqual([
      ['user', undefined],
      ['assistant', ['call_1']],
      ['tool', undefined],
      ['assistant', ['call_2']],
      ['user', undefined],
      ['assistant', ['call_3']],
    ]);
  });

  it('sends a call of a namespaced tool back under the name the upstream knows it by', () => {
    const { chat } = translate({
      input: [
        { role: 'user', content: 'Stop the helper.' },
        { ...call('call_1', 'close_agent'), namespace: 'multi_agent_v1' },
        { type: 'function_call_output', call_id: 'call_1', output: 'closed' },
      ],
    });
    expect(chat.messages[1]).toEqual({ role: 'assistant', content: null, tool_calls: [toolCall('call_1', 'multi_agent_v1__close_agent')] });
  });

  it('names a missing field of a function call or its output', () => {
    expect(refusal({ input: [{ type: 'function_call', call_id: 'c', arguments: '{}' }] })).toMatchObject({
      code: 'missing_required_field',
      param: 'input[0].name',
    });
    expect(refusal({ input: [{ type: 'function_call_output', call_id: 'c' }] })).toMatchObject({ code: 'missing_required_field', param: 'input[0].output' });
    expect(refusal({ input: [{ type: 'function_call_output', output: 'x' }] })).toMatchObject({ code: 'missing_required_field', param: 'input[0].call_id' });
  });

  it('refuses other item types as unsupported, naming the item', () => {
    const error = refusal({
      input: [
        { role: 'user', content: 'Hi' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      ],
    });
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'input[1]' });
    expect(error.message).toContain("items of type 'web_search_call'");
  });
});

describe('responsesToChat: reasoning items', () => {
  const reasoning = (text?: string): OpenAI.Responses.ResponseReasoningItem => ({
    type: 'reasoning',
    id: 'rs_1',
    summary: [{ type: 'summary_text', text: 'Summary.' }],
    ...(text === undefined ? { encrypted_content: 'gAAAA…' } : { content: [{ type: 'reasoning_text', text }] }),
  });

  it('carries reasoning text as reasoning_content of the assistant message that follows', () => {
    const { chat } = translate({ input: [{ role: 'user', content: 'Hi' }, reasoning('Think.'), { role: 'assistant', content: 'Hello.' }] });
    expect(chat.messages[1]).toEqual({ role: 'assistant', content: 'Hello.', reasoning_content: 'Think.' });
  });

  it('carries it onto the tool calls that follow, and joins two reasonings of one turn', () => {
    const { chat } = translate({
      input: [
        { role: 'user', content: 'Hi' },
        reasoning('First.'),
        { role: 'assistant', content: 'Checking.' },
        reasoning('Second.'),
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      ],
    });
    expect(chat.messages[1]).toMatchObject({ role: 'assistant', content: 'Checking.', reasoning_content: 'First.\n\nSecond.', tool_calls: [{ id: 'c1' }] });
  });

  it('drops a reasoning item with only a summary and encrypted content (sealed by the provider that made it)', () => {
    const { chat } = translate({ input: [{ role: 'user', content: 'Hi' }, reasoning(), { role: 'assistant', content: 'Hello.' }] });
    expect(chat.messages[1]).toEqual({ role: 'assistant', content: 'Hello.' });
  });

  it('drops reasoning that no assistant message follows', () => {
    const { chat } = translate({
      input: [{ role: 'user', content: 'Hi' }, reasoning('Orphan.'), { role: 'user', content: 'Again' }, { role: 'assistant', content: 'Yes.' }],
    });
    expect(chat.messages.some((message) => message.reasoning_content != null)).toBe(false);
  });
});

describe('responsesToChat: tools', () => {
  it('maps function tools', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const { chat } = translate({
      input: 'Hi',
      tools: [
        { type: 'function', name: 'get_weather', description: 'Weather of a city', parameters, strict: true },
        { type: 'function', name: 'now', parameters: null, strict: null },
      ],
    });
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters, strict: true } },
      { type: 'function', function: { name: 'now' } },
    ]);
  });

  it('leaves out the hosted tools no provider runs, and refuses the tools a client runs, naming the index', () => {
    const tools = [{ type: 'function', name: 'f', parameters: null, strict: null }, { type: 'web_search' }, { type: 'custom', name: 'grammar_tool' }];
    expect(translate({ input: 'Hi', tools: tools.slice(0, 2) as OpenAI.Responses.Tool[] }).chat.tools).toEqual([{ type: 'function', function: { name: 'f' } }]);
    expect(refusal({ input: 'Hi', tools })).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'tools[2]' });
  });

  it.each([['none'], ['auto'], ['required']] as const)('passes tool_choice %s', (choice) => {
    expect(translate({ input: 'Hi', tool_choice: choice }).chat.tool_choice).toBe(choice);
  });

  it('maps a function tool_choice', () => {
    expect(translate({ input: 'Hi', tool_choice: { type: 'function', name: 'get_weather' } }).chat.tool_choice).toEqual({
      type: 'function',
      function: { name: 'get_weather' },
    });
  });

  it.each([
    [{ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }] }],
    [{ type: 'web_search_preview' }],
    [{ type: 'mcp', server_label: 'x' }],
    [{ type: 'custom', name: 'c' }],
  ])('refuses tool_choice %o', (choice) => {
    expect(refusal({ input: 'Hi', tool_choice: choice })).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'tool_choice' });
  });
});

describe('responsesToChat: text.format', () => {
  it('maps json_schema to response_format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    const { chat } = translate({ input: 'Hi', text: { format: { type: 'json_schema', name: 'answer', schema, strict: true, description: 'An answer' } } });
    expect(chat.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema, strict: true, description: 'An answer' } });
  });

  it('maps json_object, and sends nothing for text', () => {
    expect(translate({ input: 'Hi', text: { format: { type: 'json_object' } } }).chat.response_format).toEqual({ type: 'json_object' });
    expect(translate({ input: 'Hi', text: { format: { type: 'text' } } }).chat).not.toHaveProperty('response_format');
  });

  it('names a json_schema without its name', () => {
    expect(refusal({ input: 'Hi', text: { format: { type: 'json_schema', schema: {} } } })).toMatchObject({
      code: 'missing_required_field',
      param: 'text.format.name',
    });
  });
});
