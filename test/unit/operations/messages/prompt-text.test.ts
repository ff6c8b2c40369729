import { describe, expect, it } from 'vitest';
import { countPromptTokens, promptTextBytes } from '../../../../src/operations/messages/prompt-text.ts';
import { admitted } from './helpers.ts';

describe('promptTextBytes', () => {
  it('counts the UTF-8 bytes of a string system prompt and string turns', () => {
    expect(promptTextBytes(admitted({ model: 'm', max_tokens: 1, system: 'héllo', messages: [{ role: 'user', content: 'ab' }] }))).toBe(6 + 2);
  });

  it('counts text, thinking, tool calls, tool results, plain-text documents and tool definitions, but not images or PDFs', () => {
    const request = admitted({
      model: 'm',
      max_tokens: 1,
      system: [{ type: 'text', text: 'sys' }],
      tools: [{ name: 'f', description: 'desc', input_schema: { type: 'object' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'text' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAAAAAA' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'AAAAAAAA' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'think', signature: 'not counted' },
            { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'result' }] }] },
      ],
    });
    const expected =
      'sys'.length +
      ('f'.length + 'desc'.length + '{"type":"object"}'.length) +
      'text'.length +
      'doc'.length +
      'think'.length +
      ('f'.length + '{"a":1}'.length) +
      'result'.length;
    expect(promptTextBytes(request)).toBe(expected);
  });
});

describe('countPromptTokens', () => {
  it('counts the texts with the tokenizer, plus a few tokens per turn', () => {
    const one = countPromptTokens(admitted({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hello' }] }));
    const two = countPromptTokens(
      admitted({
        model: 'm',
        max_tokens: 1,
        messages: [
          { role: 'user', content: 'hello' },
          { role: 'assistant', content: 'hello' },
        ],
      }),
    );
    expect(one).toBe(3 + 3 + 1);
    expect(two - one).toBe(3 + 1);
  });
});
