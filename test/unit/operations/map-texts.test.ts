/** What each operation hands the PII policy: every text a provider reads, named as the client sends it, and nothing else. */
import { describe, expect, it } from 'vitest';
import { mapMessagesTexts } from '../../../src/operations/messages/map-texts.ts';
import { mapResponsesTexts } from '../../../src/operations/responses/map-texts.ts';
import { embeddingsOperation } from '../../../src/operations/embeddings/operation.ts';
import { chatOperation } from '../../../src/operations/chat/operation.ts';
import type { MessagesRequest } from '../../../src/wire/anthropic-messages.ts';
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
    const body = { model: 'm', messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] } as ChatCompletionRequest;
    const { params, mapped } = visit(chatOperation.mapTexts, body);
    expect(params).toEqual(['messages[0].content', 'messages[1].content[0].text']);
    expect(mapped.messages[1]?.content).toEqual([{ type: 'text', text: 'HI' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }]);
    expect(body.messages[0]?.content).toBe('sys');
  });
});

describe('embeddings', () => {
  it('names each input text, and leaves token arrays alone', () => {
    expect(visit(embeddingsOperation.mapTexts, { model: 'e', input: 'one' })).toEqual({ params: ['input'], mapped: { model: 'e', input: 'ONE' } });
    expect(visit(embeddingsOperation.mapTexts, { model: 'e', input: ['a', 'b'] }).params).toEqual(['input[0]', 'input[1]']);
    expect(visit(embeddingsOperation.mapTexts, { model: 'e', input: [[1, 2]] })).toEqual({ params: [], mapped: { model: 'e', input: [[1, 2]] } });
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
          { type: 'text', text: 'answer' },
          { type: 'tool_use', id: 't1', name: 'f', input: { q: 'x' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'result' }] },
          { type: 'tool_result', tool_use_id: 't2', content: 'flat result' },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } },
        ],
      },
    ],
  } as MessagesRequest;

  it('names the system prompt, text blocks, tool results and plain-text documents; thinking stays as signed', () => {
    const { params, mapped } = visit(mapMessagesTexts, request);
    expect(params).toEqual([
      'messages[0].content',
      'messages[1].content[1].text',
      'messages[2].content[0].content[0].text',
      'messages[2].content[1].content',
      'messages[2].content[2].source.data',
      'system[0].text',
    ]);
    expect(mapped.system).toEqual([{ type: 'text', text: 'SYS', cache_control: { type: 'ephemeral' } }]);
    expect(mapped.messages[1]?.content).toEqual([
      { type: 'thinking', thinking: 'secret thoughts', signature: 'sig' },
      { type: 'text', text: 'ANSWER' },
      { type: 'tool_use', id: 't1', name: 'f', input: { q: 'x' } },
    ]);
    expect(request.messages[0]?.content).toBe('plain');
  });

  it('names a string system prompt', () => {
    expect(visit(mapMessagesTexts, { ...request, system: 'be brief' }).params).toContain('system');
  });
});

describe('responses', () => {
  it('names the instructions, message texts and tool outputs', () => {
    const request = {
      model: 'm',
      instructions: 'rules',
      input: [
        { role: 'user', content: 'question' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'more' }, { type: 'input_image', image_url: 'https://x/y.png' }] },
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
    expect(visit(mapResponsesTexts, { model: 'm', input: 'hello' } as ResponsesRequest)).toMatchObject({ params: ['input'], mapped: { input: 'HELLO' } });
  });
});
