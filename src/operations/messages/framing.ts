import { toAnthropicEnvelope } from '../../errors/to-envelope.ts';
import { namedEventFraming } from '../sse-framing.ts';

/** Anthropic's stream: named events ending with message_stop; a failure is `event: error` with Anthropic's error body. */
export const anthropicFraming = namedEventFraming((error, { requestId }) => toAnthropicEnvelope(error, requestId));
