import { InvalidValueError } from '../../errors/gateway-error.ts';
import { ChatMessageSchema } from '../../wire/openai-chat.ts';
import { ChatCompletionBodySchema, type ChatCompletionBody } from './request-schema.ts';

/**
 * The most that the fields the gateway does not know may hold together (a request's and its
 * messages'). They are passed to OpenAI-compatible upstreams as sent, so they ride in the queued
 * job and its event stream; what a client legitimately adds there (metadata, a vendor's option) is
 * small.
 */
export const MAX_PASSTHROUGH_BYTES = 64 * 1024;

const KNOWN_FIELDS = new Set(Object.keys(ChatCompletionBodySchema.properties));
const KNOWN_MESSAGE_FIELDS = new Set(Object.keys(ChatMessageSchema.properties));

/** Refuses a request whose unknown fields hold more than MAX_PASSTHROUGH_BYTES, naming the field that passes the bound. */
export function checkPassthroughSize(body: ChatCompletionBody): void {
  let total = 0;
  const add = (param: string, value: unknown) => {
    if (value === undefined) return;
    total += Buffer.byteLength(JSON.stringify(value));
    if (total > MAX_PASSTHROUGH_BYTES) {
      throw new InvalidValueError(
        param,
        `Fields the gateway passes on as sent may hold at most ${MAX_PASSTHROUGH_BYTES} bytes together; '${param}' brings them to ${total}.`,
      );
    }
  };
  for (const [key, value] of Object.entries(body)) if (!KNOWN_FIELDS.has(key)) add(key, value);
  for (const [i, message] of (body.messages ?? []).entries()) {
    for (const [key, value] of Object.entries(message)) if (!KNOWN_MESSAGE_FIELDS.has(key)) add(`messages[${i}].${key}`, value);
  }
}
