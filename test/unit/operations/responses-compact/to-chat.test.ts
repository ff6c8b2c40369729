/**
 * A compaction request → the summary call's chat request: the prompt, then the client's
 * instructions and the conversation as one transcript a model of any provider reads, and the
 * refusals of what cannot be compacted, each naming the field as the client sent it.
 */
import { describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { Value } from '@sinclair/typebox/value';
import { compactionChat } from '../../../../src/operations/responses-compact/to-chat.ts';
import { COMPACTION_PROMPT } from '../../../../src/operations/responses-compact/prompt.ts';
import { carrySummary } from '../../../../src/operations/responses/compaction-summary.ts';
import { ResponsesCompactRequestSchema, type ResponsesCompactRequest } from '../../../../src/wire/openai-responses-compact.ts';
import { ChatRequestSchema } from '../../../../src/wire/openai-chat.ts';
import { GatewayError } from '../../../../src/errors/gateway-error.ts';

/** An SDK-typed compaction request, checked against the door's schema before it is translated. */
function translate(params: Omit<OpenAI.Responses.ResponseCompactParams, 'model'>) {
  const request = { model: 'svc-standard', ...params };
  expect(Value.Check(ResponsesCompactRequestSchema, request), JSON.stringify([...Value.Errors(ResponsesCompactRequestSchema, request)][0])).toBe(true);
  const chat = compactionChat(request as ResponsesCompactRequest);
  expect(Value.Check(ChatRequestSchema, chat)).toBe(true);
  return chat;
}

/** The user message's text: what the model is asked to summarize. */
function userText(params: Omit<OpenAI.Responses.ResponseCompactParams, 'model'>): string {
  const { messages } = translate(params);
  expect(messages).toHaveLength(2);
  expect(messages[0]).toEqual({ role: 'system', content: COMPACTION_PROMPT });
  expect(messages[1]?.role).toBe('user');
  return messages[1]?.content as string;
}

function refusal(request: Record<string, unknown>): GatewayError {
  try {
    compactionChat({ model: 'svc-standard', ...request });
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected the request to be refused');
}

describe('compactionChat: the summary call', () => {
  it('asks for the summary of a string input, as the one user message of the conversation', () => {
    const text = userText({ input: 'Build me a landing page.' });
    expect(text).toBe(
      'The conversation:\n<conversation>\n[user]\nBuild me a landing page.\n</conversation>\n\nWrite the summary of the conversation above now.',
    );
  });

  it('gives the instructions as context, before the conversation', () => {
    const text = userText({ instructions: 'You are a coding agent.', input: 'Hi' });
    expect(text).toMatch(
      /^The instructions the assistant follows, for context .*\n<instructions>\nYou are a coding agent\.\n<\/instructions>\n\nThe conversation:/s,
    );
  });

  it('writes every item of a tool loop as an entry headed by who said or did it', () => {
    const text = userText({
      input: [
        { role: 'developer', content: 'Use TypeScript.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Fix the test.' },
            { type: 'input_image', image_url: 'data:image/png;base64,AA==', detail: 'auto' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Run the tests first.' }] },
        { type: 'function_call', call_id: 'call_1__thought__c2ln', name: 'exec_command', arguments: '{"cmd":"npm test"}' },
        { type: 'function_call_output', call_id: 'call_1__thought__c2ln', output: '1 failed' },
        { type: 'function_call', call_id: 'call_2', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{}' },
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Fixed.', annotations: [] }],
        },
      ],
    });
    expect(text).toContain(
      [
        '[developer]\nUse TypeScript.',
        '[user]\nFix the test.\n[an image]',
        '[assistant (reasoning)]\nRun the tests first.',
        // A Gemini signature in a call id is not the model's business.
        '[assistant called exec_command (call call_1)]\n{"cmd":"npm test"}',
        '[result of call call_1]\n1 failed',
        '[assistant called multi_agent_v1.spawn_agent (call call_2)]\n{}',
        '[assistant]\nFixed.',
      ].join('\n\n'),
    );
  });

  it('writes items chat cannot express (a custom tool call) by their fields, rather than refusing them', () => {
    const text = userText({
      input: [
        { role: 'user', content: 'Patch it.' },
        { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch' },
      ],
    });
    expect(text).toContain('[custom_tool_call]\n{"call_id":"c1","name":"apply_patch","input":"*** Begin Patch"}');
  });

  it("reads an earlier compaction's summary into the conversation", () => {
    const text = userText({
      input: [
        { type: 'compaction', encrypted_content: carrySummary('We chose PostgreSQL.') },
        { role: 'user', content: 'Go on.' },
      ],
    });
    expect(text).toContain('[summary of the conversation before this point]\nWe chose PostgreSQL.\n\n[user]\nGo on.');
  });

  it('forwards nothing else: no tools, no reasoning effort, no text format', () => {
    const chat = compactionChat({
      model: 'svc-standard',
      input: 'Hi',
      tools: [{ type: 'function', name: 'f', parameters: {} }],
      parallel_tool_calls: false,
      reasoning: { effort: 'high' },
      prompt_cache_key: 'k',
    } as ResponsesCompactRequest);
    expect(Object.keys(chat)).toEqual(['messages']);
  });
});

describe('compactionChat: refusals', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    ['no input', {}, 'missing_required_field', 'input'],
    ['an empty input', { input: [] }, 'invalid_value', 'input'],
    ['previous_response_id', { input: 'Hi', previous_response_id: 'resp_1' }, 'invalid_value', 'previous_response_id'],
    ['conversation', { input: 'Hi', conversation: 'conv_1' }, 'invalid_value', 'conversation'],
    [
      'an item reference',
      {
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'item_reference', id: 'msg_1' },
        ],
      },
      'invalid_value',
      'input[1]',
    ],
    [
      "OpenAI's own compaction item",
      {
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'compaction', encrypted_content: 'gAAAAABpM0Yj-sealed' },
        ],
      },
      'invalid_value',
      'input[1].encrypted_content',
    ],
  ])('%s', (_what, request, code, param) => {
    expect(refusal(request)).toMatchObject({ status: 400, code, param });
  });
});
