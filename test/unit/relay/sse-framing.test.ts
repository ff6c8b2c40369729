import { describe, expect, it } from 'vitest';
import { eventName, namedEventFraming, openAiDataFraming } from '../../../src/operations/sse-framing.ts';
import { anthropicFraming } from '../../../src/operations/messages/framing.ts';
import { responsesFraming } from '../../../src/operations/responses/framing.ts';
import { ProviderFailedError } from '../../../src/errors/gateway-error.ts';
import { iterSseEvents } from '../../../src/providers/shared/sse.ts';

const failure = new ProviderFailedError('The provider failed with HTTP 500 after 3 attempts');
const at = (seq: number, previous: string | null = null) => ({ requestId: 'req_1', id: seq > 0 ? String(seq) : undefined, previous });

async function* once(text: string) {
  yield text;
}

async function parsed(text: string) {
  const events = [];
  for await (const event of iterSseEvents(once(text))) events.push(event);
  return events;
}

describe('eventName', () => {
  it('reads the type off the start of a payload whose type comes first', () => {
    expect(eventName('{"type":"content_block_delta","index":0}')).toBe('content_block_delta');
  });

  it('parses a payload whose type does not come first', () => {
    expect(eventName('{"index":0,"type":"message_stop"}')).toBe('message_stop');
  });
});

describe('openAiDataFraming', () => {
  it('writes data lines with the id, [DONE] at the end, and an error as the envelope', async () => {
    const text = openAiDataFraming.event('{"a":1}', at(1)) + openAiDataFraming.error(failure, at(0)) + openAiDataFraming.done(at(2));
    const events = await parsed(text);
    expect(events.map((event) => [event.event, event.id, event.data])).toEqual([
      [null, '1', '{"a":1}'],
      [null, '1', JSON.stringify({ error: { type: 'api_error', code: 'provider_failed', message: failure.message, param: null, request_id: 'req_1' } })],
      [null, '2', '[DONE]'],
    ]);
  });
});

describe('named event framing', () => {
  it('names each event by its type and writes nothing for the end', async () => {
    const framing = namedEventFraming(() => ({ type: 'error' }));
    expect(framing.done(at(3))).toBe('');
    const events = await parsed(framing.event('{"type":"message_start","message":{}}', at(1)));
    expect(events.map((event) => [event.event, event.id, event.data])).toEqual([['message_start', '1', '{"type":"message_start","message":{}}']]);
  });

  it("writes Anthropic's error event with its error type, and the gateway's code", async () => {
    const [event] = await parsed(anthropicFraming.error(failure, at(0)));
    expect(event?.event).toBe('error');
    expect(JSON.parse(event?.data ?? '')).toEqual({
      type: 'error',
      error: { type: 'api_error', message: failure.message, code: 'provider_failed', param: null },
      request_id: 'req_1',
    });
  });

  it('writes each event a chunk holds, the id on the last only', async () => {
    const framing = namedEventFraming(() => ({ type: 'error' }));
    const events = await parsed(framing.event('{"type":"content_block_stop","index":0}\u001e{"type":"message_stop"}', at(9)));
    expect(events.map((event) => [event.event, event.id])).toEqual([
      ['content_block_stop', null],
      ['message_stop', '9'],
    ]);
  });

  it("writes the Responses error event numbered after the events before it, with the spec's envelope the openai SDK throws", async () => {
    const previous =
      '{"type":"response.output_text.delta","sequence_number":5,"delta":"a"}\u001e{"type":"response.output_text.delta","sequence_number":6,"delta":"b"}';
    const [event] = await parsed(responsesFraming.error(failure, at(0, previous)));
    expect(event?.event).toBe('error');
    expect(JSON.parse(event?.data ?? '')).toEqual({
      type: 'error',
      code: 'provider_failed',
      message: failure.message,
      param: null,
      sequence_number: 7,
      error: { type: 'api_error', code: 'provider_failed', message: failure.message, param: null, request_id: 'req_1' },
    });
  });
});
