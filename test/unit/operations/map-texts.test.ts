/** What each operation hands the PII policy: every text a provider reads, named as the client sends it, and nothing else. */
import { describe, expect, it } from 'vitest';
import { mapMessagesTexts } from '../../../src/operations/messages/map-texts.ts';
import { mapResponsesTexts } from '../../../src/operations/responses/map-texts.ts';
import { embeddingsWeb } from '../../../src/operations/embeddings/operation.ts';
import { chatWeb } from '../../../src/operations/chat/operation.ts';
import type { ContentBlockParam, MessagesRequest } from '../../../src/wire/anthropic-messages.ts';
import type { ResponsesRequest } from '../../../src/wire/openai-responses.ts';
import type { ChatCompletionRequest } from '../../../src/operations/chat/request-schema.ts';

/** The params `mapTexts` passes, and the body with every text upper-cased. */
function visit<B>(mapTexts: (body: B, replace: (text: string, param: string) => string) => B, body: B): { params: string[]; mapped: B } {
  const params: string[] = [];
  const mapped = mapTexts(body, (text, param) => {
    params.push(param);
    return text.toUpperCase();
  });
  return { params, mapped };
}

describe('chat', () => {
  it('names string contents and text parts', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          ],
        },
      ],
    } as ChatCompletionRequest;
    const { params, mapped } = visit(chatWeb.mapTexts, body);
    expect(params).toEqual(['messages[0].content', 'messages[1].content[0].text']);
    expect(mapped.messages[1]?.content).toEqual([
      { type: 'text', text: 'HI' },
      { type: 'image_url', image_url: { url: 'https://x/y.png' } },
    ]);
    expect(body.messages[0]?.content).toBe('sys');
  });
});

describe('embeddings', () => {
  it('names each input text, and leaves token arrays alone', () => {
    expect(visit(embeddingsWeb.mapTexts, { model: 'e', input: 'one' })).toEqual({ params: ['input'], mapped: { model: 'e', input: 'ONE' } });
    expect(visit(embeddingsWeb.mapTexts, { model: 'e', input: ['a', 'b'] }).params).toEqual(['input[0]', 'input[1]']);
    expect(visit(embeddingsWeb.mapTexts, { model: 'e', input: [[1, 2]] })).toEqual({ params: [], mapped: { model: 'e', input: [[1, 2]] } });
  });
});

describe('messages', () => {
  const request = {
    model: 'claude',
    max_tokens: 10,
    system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: 'plain' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'secret thoughts', signature: 'sig' },
          { type: 'redacted_thinking', data: 'EmwKAhgB' },
          { type: 'text', text: 'answer' },
          { type: 'tool_use', id: 't1', name: 'f', input: { q: 'x', args: ['a', 2, { deep: 'b' }], 'file-path': 'p', force: true, none: null } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [
              { type: 'text', text: 'result' },
              { type: 'search_result', source: 'https://s.test', title: 'T', content: [{ type: 'text', text: 'found' }] },
              { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'page' }] } },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            ],
          },
          { type: 'tool_result', tool_use_id: 't2', content: 'flat result' },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } },
          { type: 'document', source: { type: 'content', content: 'inline doc' } },
        ],
      },
    ],
  } as MessagesRequest;
  const blocks = (mapped: MessagesRequest, turn: number) => mapped.messages[turn]?.content as ContentBlockParam[];

  it('names the system prompt first, then every text of the turns in order: thinking, tool inputs, nested tool results and documents', () => {
    const { params } = visit(mapMessagesTexts, request);
    expect(params).toEqual([
      'system[0].text',
      'messages[0].content',
      'messages[1].content[0].thinking',
      'messages[1].content[2].text',
      'messages[1].content[3].input.q',
      'messages[1].content[3].input.args[0]',
      'messages[1].content[3].input.args[2].deep',
      'messages[1].content[3].input["file-path"]',
      'messages[2].content[0].content[0].text',
      'messages[2].content[0].content[1].content[0].text',
      'messages[2].content[0].content[2].source.content[0].text',
      'messages[2].content[1].content',
      'messages[2].content[2].source.data',
      'messages[2].content[3].source.content',
    ]);
  });

  it('replaces each text where it is, leaving ids, numbers, images and the request itself alone', () => {
    const { mapped } = visit(mapMessagesTexts, request);
    expect(mapped.system).toEqual([{ type: 'text', text: 'SYS', cache_control: { type: 'ephemeral' } }]);
    expect(blocks(mapped, 1).at(-1)).toEqual({
      type: 'tool_use',
      id: 't1',
      name: 'f',
      input: { q: 'X', args: ['A', 2, { deep: 'B' }], 'file-path': 'P', force: true, none: null },
    });
    expect(blocks(mapped, 2)[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 't1',
      content: [
        { type: 'text', text: 'RESULT' },
        { type: 'search_result', source: 'https://s.test', title: 'T', content: [{ type: 'text', text: 'FOUND' }] },
        { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'PAGE' }] } },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    });
    expect(blocks(mapped, 2)[3]).toEqual({ type: 'document', source: { type: 'content', content: 'INLINE DOC' } });
    expect(request.messages[0]?.content).toBe('plain');
    expect(blocks(request, 1)[3]?.input).toMatchObject({ q: 'x' });
  });

  // Anthropic refuses a signed thinking block whose text changed, and lets earlier turns' thinking be left out.
  it('leaves out a signed thinking block whose text would change; keeps it whole when nothing changes', () => {
    const { mapped } = visit(mapMessagesTexts, request);
    expect(blocks(mapped, 1).map((block) => block.type)).toEqual(['redacted_thinking', 'text', 'tool_use']);
    const untouched = mapMessagesTexts(request, (text) => text);
    expect(blocks(untouched, 1)[0]).toEqual({ type: 'thinking', thinking: 'secret thoughts', signature: 'sig' });
  });

  it('masks an unsigned thinking block (a chat model’s reasoning, as the gateway translates it) in place', () => {
    const unsigned = {
      ...request,
      messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'reasoning', signature: '' }] }],
    } as MessagesRequest;
    expect(visit(mapMessagesTexts, unsigned).mapped.messages[0]?.content).toEqual([{ type: 'thinking', thinking: 'REASONING', signature: '' }]);
  });

  it('names a string system prompt', () => {
    expect(visit(mapMessagesTexts, { ...request, system: 'be brief' }).params[0]).toBe('system');
  });
});

describe('responses', () => {
  it('names the instructions, message texts and tool outputs', () => {
    const request = {
      model: 'm',
      instructions: 'rules',
      input: [
        { role: 'user', content: 'question' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'more' },
            { type: 'input_image', image_url: 'https://x/y.png' },
          ],
        },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'tool said' },
      ],
    } as ResponsesRequest;
    const { params, mapped } = visit(mapResponsesTexts, request);
    expect(params).toEqual(['instructions', 'input[0].content', 'input[1].content[0].text', 'input[3].output']);
    expect(mapped.instructions).toBe('RULES');
    expect((mapped.input as unknown[])[2]).toEqual((request.input as unknown[])[2]);
  });

  it('names a string input', () => {
    expect(visit(mapResponsesTexts, { model: 'm', input: 'hello' })).toMatchObject({ params: ['input'], mapped: { input: 'HELLO' } });
  });
});
