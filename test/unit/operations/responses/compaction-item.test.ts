/**
 * A compaction item in a /v1/responses request: what POST /v1/responses/compact answered, sent
 * back as the start of the next input, becomes the summary as a user message for any provider;
 * an item this gateway did not make is a 400 naming it; the PII policy reads its summary.
 */
import { describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { Value } from '@sinclair/typebox/value';
import { carriedSummary, carrySummary, SUMMARY_PREFIX } from '../../../../src/operations/responses/compaction-summary.ts';
import { responsesToChat } from '../../../../src/operations/responses/to-chat.ts';
import { mapResponsesTexts } from '../../../../src/operations/responses/map-texts.ts';
import { compactedResponse } from '../../../../src/operations/responses-compact/from-chat.ts';
import { ResponsesRequestSchema, type ResponsesRequest } from '../../../../src/wire/openai-responses.ts';
import { GatewayError } from '../../../../src/errors/gateway-error.ts';

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

/** A request the door lets through, translated. */
function translate(request: Record<string, unknown>) {
  const body = { model: 'svc-standard', ...request };
  expect(Value.Check(ResponsesRequestSchema, body), JSON.stringify([...Value.Errors(ResponsesRequestSchema, body)][0])).toBe(true);
  return responsesToChat(body).chat;
}

describe('the compaction summary', () => {
  it('is carried behind its version mark and read back; anything else is not ours', () => {
    const content = carrySummary('Summary with ünïcödé and "quotes".');
    expect(content).toMatch(/^gw\.compaction\.1:[A-Za-z0-9_-]+$/);
    expect(carriedSummary(content)).toBe('Summary with ünïcödé and "quotes".');
    for (const other of [
      'gAAAAABpM0Yj-sealed',
      'gw.compaction.1:not-json',
      `gw.compaction.1:${Buffer.from('{"text":1}').toString('base64url')}`,
      null,
      undefined,
    ])
      expect(carriedSummary(other)).toBeNull();
  });
});

describe('responsesToChat: a compaction item', () => {
  it('turns the compacted output, with the next message after it, into the kept messages, the summary as a user message, and the new one', () => {
    const compacted = compactedResponse(
      {
        model: 'svc-standard',
        input: [
          { role: 'user', content: 'Build a page.' },
          { role: 'assistant', content: 'Done: index.html.' },
        ],
      },
      'The page is in index.html.',
      USAGE,
      { id: 'resp_req_1', createdAt: 1 },
    );
    // The SDK's own input types: the items a client sends back.
    const input: OpenAI.Responses.ResponseInputItem[] = [
      ...(compacted.output as OpenAI.Responses.ResponseInputItem[]),
      { role: 'user', content: 'Now make it blue.' },
    ];
    expect(translate({ instructions: 'Be helpful.', input }).messages).toEqual([
      { role: 'system', content: 'Be helpful.' },
      { role: 'user', content: [{ type: 'text', text: 'Build a page.' }] },
      { role: 'user', content: `${SUMMARY_PREFIX}The page is in index.html.` },
      { role: 'user', content: 'Now make it blue.' },
    ]);
  });

  it("refuses an encrypted_content this gateway did not make (OpenAI's), naming the item's field", () => {
    const request = {
      model: 'svc-standard',
      input: [
        { role: 'user', content: 'Hi' },
        { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAABpM0Yj-sealed' },
      ],
    };
    expect(Value.Check(ResponsesRequestSchema, request)).toBe(true);
    const error = (() => {
      try {
        responsesToChat(request as ResponsesRequest);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'input[1].encrypted_content' });
    expect((error as GatewayError).message).toContain('not made by this gateway');
  });
});

describe('mapResponsesTexts: a compaction item', () => {
  it("hands the PII policy the summary, named by the item's encrypted_content, and carries the masked text on", () => {
    const request = { model: 'm', input: [{ type: 'compaction', encrypted_content: carrySummary('mail jane@example.com') }] } as ResponsesRequest;
    const params: string[] = [];
    const mapped = mapResponsesTexts(request, (text, param) => {
      params.push(param);
      return text.replace('jane@example.com', '[EMAIL]');
    });
    expect(params).toEqual(['input[0].encrypted_content']);
    const [item] = mapped.input as Array<{ encrypted_content: string }>;
    expect(carriedSummary(item?.encrypted_content)).toBe('mail [EMAIL]');
  });

  it('leaves one it cannot read alone (the translation refuses it)', () => {
    const request = { model: 'm', input: [{ type: 'compaction', encrypted_content: 'gAAAA-sealed' }] } as ResponsesRequest;
    expect(mapResponsesTexts(request, () => 'x')).toEqual(request);
  });
});
