/**
 * The Vercel AI SDK (`ai` with `@ai-sdk/openai`'s `provider.responses()`) against web and worker processes,
 * a fake chat completions upstream on loopback. With `store` left at its default (true), the SDK sends an
 * earlier assistant text part that carries its response item id (providerOptions.openai.itemId, which it
 * keeps from the response that produced it) as `{type: 'item_reference', id}` rather than as the text
 * (convertToOpenAIResponsesInput in node_modules/@ai-sdk/openai): nothing needs setting for that. The
 * gateway resolves the reference against the tenant's stored items, so the upstream, which speaks chat
 * completions only, gets the earlier assistant text in its place.
 *
 * Function calls are not referred to: the SDK sends a client-side tool's call in full (`function_call`) and
 * its result as `function_call_output`, whatever `store` is; only the assistant text of a tool-calling turn
 * goes by reference, which the tool loop below shows.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

/** One HTTP call the SDK made to the gateway: its path, the JSON body it sent, the status it got. */
interface SentCall {
  path: string;
  body: Record<string, unknown>;
  status: number;
}

type InputItem = { type?: string; id?: string; role?: string; content?: unknown; call_id?: string };
type ChatMessage = {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
};

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let provider: OpenAIProvider;
const sent: SentCall[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url) });
  const { secret } = await gateway.issueKey('acme', 'app');
  // What the SDK puts on the wire is the point: a fetch that keeps each request body before passing it on.
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : {};
    sent.push({ path: url.pathname, body, status: response.status });
    return response;
  };
  provider = createOpenAI({ baseURL: gateway.baseURL, apiKey: secret, fetch: recording });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => {
  upstream.reset();
  sent.length = 0;
});

function inputOf(call: SentCall | undefined): InputItem[] {
  expect(call?.path).toBe('/v1/responses');
  return (call?.body.input ?? []) as InputItem[];
}

function chatMessages(n: number): ChatMessage[] {
  return (upstream.requests[n]?.body as { messages: ChatMessage[] }).messages;
}

/** A chat message's text: its content string, or its text parts joined. */
function textOf(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((part: { type?: string; text?: string }) => (part.type === 'text' ? part.text : `<${part.type}>`)).join('');
}

/** The upstream's chat messages of call `n` as [role, text] pairs. */
function rolesAndTexts(n: number): Array<[string, unknown]> {
  return chatMessages(n).map((message) => [message.role, textOf(message.content)]);
}

/** The response item id the SDK kept on the assistant text of `messages` (what it refers to next turn). */
function itemIdOfAssistantText(messages: ModelMessage[]): string {
  const assistant = messages.find((message) => message.role === 'assistant');
  const parts = Array.isArray(assistant?.content) ? assistant.content : [];
  const text = parts.find((part) => part.type === 'text');
  const id = text?.providerOptions?.openai?.itemId;
  expect(id, 'the SDK keeps the output message id on the assistant text part').toEqual(expect.any(String));
  return id as string;
}

describe('multi-turn chat with provider.responses(), as the AI SDK docs show it', () => {
  const firstTurn: ModelMessage[] = [{ role: 'user', content: 'My name is Ada.' }];

  it('sends the earlier assistant message as an item_reference; the gateway resolves it and the second turn succeeds', async () => {
    upstream.script([
      { kind: 'ok', text: 'Hello Ada.' },
      { kind: 'ok', text: 'Your name is Ada.' },
    ]);
    const first = await generateText({ model: provider.responses('fake-gpt'), messages: firstTurn, maxRetries: 0 });
    expect(first.text).toBe('Hello Ada.');
    const itemId = itemIdOfAssistantText(first.response.messages);

    const secondTurn: ModelMessage[] = [...firstTurn, ...first.response.messages, { role: 'user', content: 'What is my name?' }];
    const second = await generateText({ model: provider.responses('fake-gpt'), messages: secondTurn, maxRetries: 0 });

    // (1) What the SDK sent: no `store` (the gateway's default, true, applies) and the reference in the assistant's place.
    expect(sent).toHaveLength(2);
    expect(sent[1]?.body.store).toBeUndefined();
    const input = inputOf(sent[1]);
    expect(input.map((item) => item.type ?? item.role)).toEqual(['user', 'item_reference', 'user']);
    expect(input[1]).toEqual({ type: 'item_reference', id: itemId });
    expect(input.some((item) => item.role === 'assistant')).toBe(false);
    // (2) The second turn succeeded.
    expect(sent[1]?.status).toBe(200);
    expect(second.text).toBe('Your name is Ada.');
    expect(second.finishReason).toBe('stop');
    // (3) The upstream got the earlier assistant text where the reference was.
    expect(upstream.requests).toHaveLength(2);
    expect(rolesAndTexts(1)).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'Hello Ada.'],
      ['user', 'What is my name?'],
    ]);
  });

  it('does the same for a streamed second turn (streamText)', async () => {
    upstream.script([
      { kind: 'ok', text: 'Hello Ada.' },
      { kind: 'ok', text: 'Your name is Ada, still.', chunks: 4 },
    ]);
    const first = await generateText({ model: provider.responses('fake-gpt'), messages: firstTurn, maxRetries: 0 });
    const itemId = itemIdOfAssistantText(first.response.messages);

    const errors: unknown[] = [];
    const stream = streamText({
      model: provider.responses('fake-gpt'),
      messages: [...firstTurn, ...first.response.messages, { role: 'user', content: 'Again?' }],
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error),
    });
    const deltas: string[] = [];
    for await (const delta of stream.textStream) deltas.push(delta);
    expect(errors).toEqual([]);
    expect(deltas.join('')).toBe('Your name is Ada, still.');
    expect(await stream.finishReason).toBe('stop');

    expect(sent[1]?.body.stream).toBe(true);
    expect(inputOf(sent[1])).toContainEqual({ type: 'item_reference', id: itemId });
    expect(sent[1]?.status).toBe(200);
    expect(rolesAndTexts(1)).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'Hello Ada.'],
      ['user', 'Again?'],
    ]);
    // A streamed answer is stored too: a third turn can refer to it.
    const streamedMessages = (await stream.response).messages;
    const streamedId = itemIdOfAssistantText(streamedMessages);
    upstream.script([{ kind: 'ok', text: 'Third.' }]);
    const third = await generateText({
      model: provider.responses('fake-gpt'),
      messages: [...firstTurn, ...first.response.messages, { role: 'user', content: 'Again?' }, ...streamedMessages, { role: 'user', content: 'Once more' }],
      maxRetries: 0,
    });
    expect(third.text).toBe('Third.');
    expect(inputOf(sent[2]).filter((item) => item.type === 'item_reference')).toEqual([
      { type: 'item_reference', id: itemId },
      { type: 'item_reference', id: streamedId },
    ]);
    expect(
      chatMessages(2)
        .filter((message) => message.role === 'assistant')
        .map((message) => textOf(message.content)),
    ).toEqual(['Hello Ada.', 'Your name is Ada, still.']);
  });

  it('without store (providerOptions.openai.store: false) the SDK sends the text itself, and the turn works as before', async () => {
    upstream.script([
      { kind: 'ok', text: 'Hello Ada.' },
      { kind: 'ok', text: 'Ada.' },
    ]);
    const providerOptions = { openai: { store: false } };
    const first = await generateText({ model: provider.responses('fake-gpt'), messages: firstTurn, providerOptions, maxRetries: 0 });
    const second = await generateText({
      model: provider.responses('fake-gpt'),
      messages: [...firstTurn, ...first.response.messages, { role: 'user', content: 'Name?' }],
      providerOptions,
      maxRetries: 0,
    });
    expect(second.text).toBe('Ada.');
    const input = inputOf(sent[1]);
    expect(input.some((item) => item.type === 'item_reference')).toBe(false);
    expect(input).toContainEqual({ role: 'assistant', content: 'Hello Ada.' });
  });
});

describe('a tool loop with provider.responses()', () => {
  it('refers to the text of the tool-calling turn and sends the call and its result in full', async () => {
    upstream.script([
      { kind: 'ok', text: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { kind: 'ok', text: 'It is sunny in Paris.' },
    ]);
    const cities: string[] = [];
    const getWeather = tool({
      description: 'The weather in a city',
      inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
      execute: async ({ city }) => {
        cities.push(city);
        return '18°C, sunny';
      },
    });
    const result = await generateText({
      model: provider.responses('fake-gpt'),
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: { get_weather: getWeather },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(cities).toEqual(['Paris']);
    expect(result.text).toBe('It is sunny in Paris.');
    expect(result.steps).toHaveLength(2);

    const itemId = itemIdOfAssistantText(result.steps[0]?.response.messages ?? []);
    const input = inputOf(sent[1]);
    expect(input.map((item) => item.type ?? item.role)).toEqual(['user', 'item_reference', 'function_call', 'function_call_output']);
    expect(input[1]).toEqual({ type: 'item_reference', id: itemId });
    expect(input[2]).toMatchObject({ type: 'function_call', call_id: 'call_1', name: 'get_weather' });
    expect(input[3]).toMatchObject({ type: 'function_call_output', call_id: 'call_1' });
    expect(sent[1]?.status).toBe(200);

    // The upstream got the whole conversation as chat messages: the referred text in its place, with the call
    // it came with, then the result.
    expect(chatMessages(1)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18°C, sunny' },
    ]);
  });
});
