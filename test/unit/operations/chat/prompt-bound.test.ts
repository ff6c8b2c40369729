/**
 * What a budget reserves for a chat prompt bounds its tokens: text that tokenizes densely (digits, spaces,
 * punctuation: about a token per two bytes, where English is one per four) stays under the bound, and so do
 * tools, an output schema and the calls of assistant turns, which the byte estimate of the text alone leaves out.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chatPromptBound } from '../../../../src/operations/chat/prompt-bound.ts';
import { countPromptTokens, countTextTokens, estimateTokens, promptTokensUpperBound } from '../../../../src/providers/shared/tokens.ts';
import type { ChatMessage } from '../../../../src/wire/openai-chat.ts';

const user = (content: string): ChatMessage => ({ role: 'user', content });

describe('chatPromptBound', () => {
  it('is at least the tokenizer’s count of any text, where the bytes/4 estimate is not', () => {
    const digits = Array.from({ length: 400 }, (_, i) => `${(i * 7919) % 1000} `).join('');
    expect(countPromptTokens([user(digits)])).toBeGreaterThan(estimateTokens(promptTokensUpperBound([user(digits)])));
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: fc.constantFrom('0', '1', ' ', '.', '\n') })), {
          minLength: 1,
          maxLength: 6,
        }),
        (texts) => {
          const messages = texts.map(user);
          expect(chatPromptBound({ messages })).toBeGreaterThanOrEqual(countPromptTokens(messages));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('counts the tools, the output schema and the calls assistant turns made', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string', description: 'x'.repeat(400) } } };
    const tools = [{ type: 'function' as const, function: { name: 'weather', description: 'The weather of a city', parameters } }];
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'weather', arguments: JSON.stringify({ city: '9 '.repeat(300) }) } };
    const messages: ChatMessage[] = [
      user('hi'),
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ];
    const response_format = { type: 'json_schema' as const, json_schema: { name: 'answer', schema: parameters } };
    const bound = chatPromptBound({ messages, tools, response_format });
    const structured = [tools, [call], response_format].reduce((sum, value) => sum + countTextTokens(JSON.stringify(value)), 0);
    expect(bound).toBeGreaterThanOrEqual(countPromptTokens(messages) + structured);
    expect(bound).toBeGreaterThan(promptTokensUpperBound(messages) + 1_500);
  });
});
