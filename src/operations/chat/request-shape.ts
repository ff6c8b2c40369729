import { InvalidValueError, MissingRequiredFieldError } from '../../errors/gateway-error.ts';
import type { ChatCompletionBody } from './request-schema.ts';

// What a named-prompt request may carry besides `prompt` and `variables`: how to deliver
// the answer and who the end user is, never what the registered prompt decides.
const ALLOWED_WITH_PROMPT = new Set(['prompt', 'variables', 'stream', 'stream_options', 'user']);

/** A body is either a named-prompt request or a plain one; each gets errors that say why. */
export type RequestShape = { kind: 'prompt'; name: string; variables: Record<string, unknown> } | { kind: 'messages' };

/** Decides the shape of a validated body, rejecting mixtures with a 400 naming the field. */
export function requestShape(body: ChatCompletionBody): RequestShape {
  if (body.prompt === undefined) {
    if (body.model === undefined) throw new MissingRequiredFieldError('model');
    if (body.messages === undefined) throw new MissingRequiredFieldError('messages');
    if (body.variables !== undefined) throw new InvalidValueError('variables', "'variables' is only used with 'prompt'.");
    return { kind: 'messages' };
  }
  for (const field of ['model', 'messages'] as const) {
    if (body[field] !== undefined) {
      throw new InvalidValueError(field, `'${field}' cannot be sent with 'prompt': a named prompt applies its registered model and messages.`);
    }
  }
  const extra = Object.keys(body).find((key) => !ALLOWED_WITH_PROMPT.has(key) && (body as Record<string, unknown>)[key] !== undefined);
  if (extra) throw new InvalidValueError(extra, `'${extra}' cannot be sent with 'prompt': the prompt's registered parameters apply.`);
  return { kind: 'prompt', name: body.prompt, variables: body.variables ?? {} };
}
