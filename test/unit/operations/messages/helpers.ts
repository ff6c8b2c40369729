/** Shared by the Messages translation tests: the door's type guard, the error a translation throws, the official client answered in-process. */
import Anthropic from '@anthropic-ai/sdk';
import { Value } from '@sinclair/typebox/value';
import { MessagesRequestSchema, type MessagesRequest } from '../../../../src/wire/anthropic-messages.ts';

/** Sampling fields the API still takes from older clients, which the SDK's types no longer carry (1.12). */
export interface LegacySampling {
  temperature?: number;
  top_p?: number;
  top_k?: number;
}

/** A request built with the official SDK's types, as the door's schema types it (fails the test when the schema refuses it). */
export function admitted(params: Anthropic.Messages.MessageCreateParams & LegacySampling): MessagesRequest {
  if (!Value.Check(MessagesRequestSchema, params))
    throw new Error(`the schema refuses the request: ${JSON.stringify([...Value.Errors(MessagesRequestSchema, params)].slice(0, 3))}`);
  return params;
}

export { gatewayError } from '../../../helpers/gateway-errors.ts';

/** An SSE body as the web tier writes it: the event name is the data's `type`. */
export function sseOf(events: ReadonlyArray<{ type: string }>): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

/** The official client, answered by `body` (JSON, or an SSE text) for every request it makes. */
export function clientAnswering(body: string | object): Anthropic {
  const sse = typeof body === 'string';
  return new Anthropic({
    apiKey: 'sk-test',
    baseURL: 'http://gateway.test',
    maxRetries: 0,
    fetch: async () => new Response(sse ? body : JSON.stringify(body), { headers: { 'content-type': sse ? 'text/event-stream' : 'application/json' } }),
  });
}

/** What the SDK made of a stream of events: the final message of `messages.stream()`. */
export function accumulated(body: string): Promise<Anthropic.Messages.Message> {
  return clientAnswering(body)
    .messages.stream({ model: 'claude-test', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] })
    .finalMessage();
}

/**
 * The fields of answer blocks that say what they hold (leaving out citations, caller and the SDK's
 * own fields), consecutive text blocks as one: chat holds an answer's text as one string.
 */
export function blocksOf(content: readonly Anthropic.Messages.ContentBlock[]): unknown[] {
  const blocks: unknown[] = [];
  let text: { type: 'text'; text: string } | null = null;
  for (const block of content) {
    if (block.type === 'text' && text !== null) {
      text.text += block.text;
      continue;
    }
    text = block.type === 'text' ? { type: 'text', text: block.text } : null;
    blocks.push(text ?? essentials(block));
  }
  return blocks;
}

function essentials(block: Anthropic.Messages.ContentBlock): unknown {
  switch (block.type) {
    case 'thinking':
      return { type: block.type, thinking: block.thinking, signature: block.signature };
    case 'redacted_thinking':
      return { type: block.type, data: block.data };
    case 'tool_use':
      return { type: block.type, id: block.id, name: block.name, input: block.input };
    default:
      return { type: block.type };
  }
}
