/**
 * A tool call's provider signature, carried in its id for dialects that have no other place for it.
 * Gemini signs its function calls (`extra_content.google.thought_signature` in the chat format) and
 * Gemini 3 refuses a later turn whose call comes back without the signature; Anthropic's tool_use
 * blocks and the Responses API's function_call items have no field for it, but their clients send
 * each call's id back unchanged. So the id goes out as `<id>__thought__<signature>` (the signature
 * in base64url, so that the id keeps to Anthropic's `[A-Za-z0-9_-]`), as LiteLLM does, and is split
 * again when it comes back.
 */
import type { ToolCall } from '../wire/openai-chat.ts';

const MARK = '__thought__';

/** The id to give the client: the call's id, with its signature when it has one. */
export function signedCallId(id: string, signature: string | undefined): string {
  return signature === undefined || signature === '' ? id : `${id}${MARK}${Buffer.from(signature, 'utf8').toString('base64url')}`;
}

/** The id of a chat tool call, with its Gemini signature. */
export function signedIdOf(call: Pick<ToolCall, 'id' | 'extra_content'>): string {
  return signedCallId(call.id, call.extra_content?.google?.thought_signature);
}

/** An id the client sent back: the call's own id, and its signature if the id carried one. */
export function splitCallId(sent: string): { id: string; signature: string | undefined } {
  const at = sent.indexOf(MARK);
  if (at === -1) return { id: sent, signature: undefined };
  return { id: sent.slice(0, at), signature: Buffer.from(sent.slice(at + MARK.length), 'base64url').toString('utf8') };
}

/** The chat tool call of an id the client sent back, with the signature restored where Gemini reads it. */
export function callWithSignature(sent: string, call: Omit<ToolCall, 'id'>): ToolCall {
  const { id, signature } = splitCallId(sent);
  return signature === undefined ? { id, ...call } : { id, ...call, extra_content: { google: { thought_signature: signature } } };
}
