import { toEnvelope } from '../../errors/to-envelope.ts';
import { payloadParts } from '../../infra/events/reply-events.ts';
import { namedEventFraming } from '../sse-framing.ts';

// Every event the translation writes has its sequence number second, after its type.
const SEQUENCE_NUMBER = /^\{"type":"[^"]*","sequence_number":(\d+)/;

/** The sequence number after the client's last event: 0 when it had none. */
function nextSequenceNumber(previous: string | null): number {
  const last = previous === null ? undefined : payloadParts(previous).at(-1);
  const match = last === undefined ? null : SEQUENCE_NUMBER.exec(last);
  return match ? Number(match[1]) + 1 : 0;
}

/**
 * The Responses API's stream: named events ending with response.completed (or .incomplete). A
 * failure is its `error` event, numbered after the events before it; it also carries the spec's
 * envelope under `error`, on which the openai SDK throws the APIError a chat stream's error raises.
 */
export const responsesFraming = namedEventFraming((error, { requestId, previous }) => {
  const envelope = toEnvelope(error, requestId);
  return { type: 'error', code: error.code, message: error.message, param: error.param, sequence_number: nextSequenceNumber(previous), error: envelope.error };
});
