/**
 * The gateway's own `error` event in a Responses stream is numbered after the last event the
 * client had, whichever the translation made: a foreground stream's, or a background stream's,
 * which begins with response.queued.
 */
import { describe, expect, it } from 'vitest';
import { ProviderFailedError } from '../../../../src/errors/gateway-error.ts';
import { groupPayloads } from '../../../../src/infra/events/reply-events.ts';
import { ResponseStreamTranslator, queuedEvent } from '../../../../src/operations/responses/from-chat.ts';
import { responsesFraming } from '../../../../src/operations/responses/framing.ts';
import { chunk, contextFor } from './fixtures.ts';

const failure = new ProviderFailedError('The provider failed with HTTP 500 after 3 attempts');

/** The sequence_number of the error event written after `previous` (the client's last chunk of events). */
function errorNumberAfter(previous: readonly object[] | null): number {
  const text = responsesFraming.error(failure, {
    requestId: 'req_1',
    id: undefined,
    previous: previous === null ? null : groupPayloads(previous.map((event) => JSON.stringify(event))),
  });
  const data = /^data: (.*)$/m.exec(text)?.[1] ?? '';
  return (JSON.parse(data) as { sequence_number: number }).sequence_number;
}

describe('the Responses error event', () => {
  it('is 0 when the client had no event', () => {
    expect(errorNumberAfter(null)).toBe(0);
  });

  it('follows the last event of a foreground stream', () => {
    const translator = new ResponseStreamTranslator(contextFor());
    const opening = translator.start();
    expect(errorNumberAfter(opening)).toBe(2);
    expect(errorNumberAfter(translator.push(chunk({ content: 'Hel' })))).toBe(5);
  });

  it('follows response.queued, and the events of a background stream numbered after it', () => {
    const context = contextFor({ background: true }, { background: true, firstSequenceNumber: 1 });
    expect(errorNumberAfter([queuedEvent(context)])).toBe(1);
    const translator = new ResponseStreamTranslator(context);
    const events = [...translator.start(), ...translator.push(chunk({ content: 'Hel' }))];
    expect(errorNumberAfter(events)).toBe(6);
  });
});
