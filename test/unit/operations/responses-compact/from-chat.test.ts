/**
 * The summary call's answer → the compacted response, in OpenAI's shape: the user messages of the
 * input as they were, then one compaction item carrying the summary where this gateway (and only
 * it) reads it back; the summary call's usage in the Responses API's terms.
 */
import { describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import type { ResponseCompactionItem, ResponseInputMessageItem, ResponseUsage } from 'openai/resources/responses/responses';
import { compactedResponse, keptMessages, summaryOf } from '../../../../src/operations/responses-compact/from-chat.ts';
import { carriedSummary } from '../../../../src/operations/responses/compaction-summary.ts';
import { CompactedResponseSchema, type ResponsesCompactRequest } from '../../../../src/wire/openai-responses-compact.ts';
import type { ChatCompletion, Usage } from '../../../../src/wire/openai-chat.ts';
import { ProviderFailedError } from '../../../../src/errors/gateway-error.ts';
const CREATED_AT = 1_767_225_600;
const USAGE: Usage = {
  prompt_tokens: 120,
  completion_tokens: 40,
  total_tokens: 160,
  prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 8 },
  completion_tokens_details: { reasoning_tokens: 12 },
};
const CONTEXT = { id: 'resp_req_01JREQ', createdAt: CREATED_AT };

function completion(content: string | null): ChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    usage: USAGE,
  };
}

const REQUEST: ResponsesCompactRequest = {
  model: 'svc-standard',
  input: [
    { role: 'user', content: 'Create a landing page.' },
    { type: 'message', id: 'msg_a', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Here it is.' }] },
    { type: 'function_call', call_id: 'c1', name: 'write_file', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    { role: 'developer', content: 'Be brief.' },
    { type: 'message', id: 'msg_mine', role: 'user', content: [{ type: 'input_text', text: 'Make it blue.' }] },
  ],
};

describe('compactedResponse', () => {
  it("is OpenAI's compacted response: the user messages kept, then the compaction item, and the usage", () => {
    const compacted = compactedResponse(REQUEST, 'A blue landing page is being built.', USAGE, CONTEXT);
    expect(Value.Check(CompactedResponseSchema, compacted), JSON.stringify([...Value.Errors(CompactedResponseSchema, compacted)][0])).toBe(true);
    const [first, second, item] = compacted.output;
    expect(compacted).toMatchObject({ id: 'resp_req_01JREQ', object: 'response.compaction', created_at: CREATED_AT });
    expect(compacted.output).toHaveLength(3);
    // The SDK's types of what OpenAI sends.
    const kept: ResponseInputMessageItem[] = [first, second] as ResponseInputMessageItem[];
    expect(kept).toEqual([
      { type: 'message', id: 'msg_req_01JREQ_0', status: 'completed', role: 'user', content: [{ type: 'input_text', text: 'Create a landing page.' }] },
      { type: 'message', id: 'msg_mine', status: 'completed', role: 'user', content: [{ type: 'input_text', text: 'Make it blue.' }] },
    ]);
    const compaction: ResponseCompactionItem = item as ResponseCompactionItem;
    expect(compaction).toEqual({ type: 'compaction', id: 'cmp_req_01JREQ_2', encrypted_content: expect.stringMatching(/^gw\.compaction\.1:[\w-]+$/) });
    expect(carriedSummary(compaction.encrypted_content)).toBe('A blue landing page is being built.');
    const usage: ResponseUsage = compacted.usage;
    expect(usage).toEqual({
      input_tokens: 120,
      input_tokens_details: { cached_tokens: 100, cache_write_tokens: 8 },
      output_tokens: 40,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 160,
    });
  });

  it('keeps a string input as one user message of input_text', () => {
    expect(keptMessages('Hello', (i) => `msg_${i}`)).toEqual([
      { type: 'message', id: 'msg_0', status: 'completed', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] },
    ]);
  });

  it('keeps the parts of a user message as they came (an image too), and leaves out an earlier compaction', () => {
    const image = { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' };
    const kept = keptMessages(
      [
        { type: 'compaction', encrypted_content: 'gw.compaction.1:e30' },
        { role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, image] },
      ],
      (i) => `msg_${i}`,
    );
    expect(kept).toEqual([
      { type: 'message', id: 'msg_0', status: 'completed', role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, image] },
    ]);
  });
});

describe('summaryOf', () => {
  it("is the answer's text, trimmed", () => {
    expect(summaryOf(completion('  The summary.\n'), 'svc-standard')).toBe('The summary.');
  });

  it('is a provider failure when the model wrote nothing', () => {
    for (const content of [null, '  ']) expect(() => summaryOf(completion(content), 'svc-standard')).toThrow(ProviderFailedError);
  });
});
