/**
 * How a worker runs a Messages request: untranslated on a candidate whose provider speaks
 * Anthropic's API, translated to chat and back on the others. Either way the client gets
 * Anthropic's message or events, with `model` naming the catalog alias that answered.
 */
import type { MessagesJob } from './payload.ts';
import type { ProviderTarget } from '../../providers/types.ts';
import { isRecord } from '../../wire/json.ts';
import { speaksMessages } from '../../providers/descriptors.ts';
import { readUsage, usageOf as chatUsageOf, type AnthropicUsage } from '../../wire/anthropic-usage.ts';
import type { MessagesRequest } from '../../wire/anthropic-messages.ts';
import type { FinalEvent, OperationRunner, RunContext, SentChunk } from '../runner.ts';
import { producedText } from '../chat/produced-text.ts';
import { chatToMessage, MessageStreamTranslator } from './from-chat.ts';
import { countPromptTokens } from './prompt-text.ts';
import { messagesToChat } from './to-chat.ts';
import { MESSAGES_PARAMS } from './param-names.ts';
import { renamingParams } from '../client-params.ts';

type MessagesRun = RunContext<MessagesJob>;

/** The request as the client sent it, for the translation to chat. */
function requestOf(data: MessagesJob): MessagesRequest {
  return { ...data.body, model: data.requestedModel, stream: data.stream };
}

function nativeRequest(ctx: MessagesRun, target: ProviderTarget, timeoutMs: number) {
  return { target, body: ctx.data.body, betas: ctx.data.betas, signal: ctx.signal, timeoutMs };
}

function chatRequest(ctx: MessagesRun, target: ProviderTarget, timeoutMs: number) {
  return { target, body: messagesToChat(requestOf(ctx.data)).chat, signal: ctx.signal, timeoutMs };
}

/** The countable text of a content block, whole or as a delta: text, thinking, a tool call's input. */
function blockText(block: Record<string, unknown>): string {
  const input = block.input === undefined ? '' : JSON.stringify(block.input);
  return [block.text, block.thinking, block.partial_json].filter((text): text is string => typeof text === 'string').join('') + input;
}

/** What one Anthropic event carried: the text of a block delta, and the model of message_start. */
function readEvent(event: Record<string, unknown>): SentChunk {
  const message = event.type === 'message_start' && isRecord(event.message) ? event.message : null;
  const delta = event.type === 'content_block_delta' && isRecord(event.delta) ? event.delta : null;
  return { text: delta ? blockText(delta) : '', model: typeof message?.model === 'string' ? message.model : null };
}

/** A non-streamed message: the upstream's own, or the chat answer translated, as one `result` event. */
async function runMessage(ctx: MessagesRun): Promise<FinalEvent> {
  const { value: message } = await ctx.attempt(
    async (target, timeoutMs) => {
      if (speaksMessages(target.provider)) {
        const native = await ctx.providers.messages.complete(nativeRequest(ctx, target, timeoutMs));
        const usage = readUsage(native.usage);
        ctx.trace.reported = usage === null ? null : chatUsageOf(usage);
        ctx.trace.text = native.content.map((block) => (isRecord(block) ? blockText(block) : '')).join('');
        return { ...native, model: target.alias };
      }
      const completion = await ctx.providers.complete(chatRequest(ctx, target, timeoutMs));
      ctx.trace.reported = completion.usage ?? null;
      ctx.trace.text = completion.choices.map((choice) => producedText(choice.message)).join('');
      return chatToMessage({ ...completion, usage: ctx.usage().usage }, target.alias);
    },
    () => true,
  );
  return { type: 'result', payload: JSON.stringify(message) };
}

/**
 * Relays an upstream's own stream, its message named by the alias; its usage and text go to the
 * trace. The events around the content (message_start, a block's start and stop, message_delta,
 * message_stop) go out with the next delta, or together at the end: each stored event then carries
 * content, as a chat chunk does, and costs Redis what one does.
 */
async function relayNative(ctx: MessagesRun, target: ProviderTarget, timeoutMs: number): Promise<void> {
  let start: AnthropicUsage | null = null;
  let delta: AnthropicUsage | null = null;
  let held: string[] = [];
  for await (const event of ctx.providers.messages.stream(nativeRequest(ctx, target, timeoutMs))) {
    let sent = event;
    if (event.type === 'message_start' && isRecord(event.message)) {
      start = readUsage(event.message.usage);
      sent = { ...event, message: { ...event.message, model: target.alias } };
    } else if (event.type === 'message_delta') {
      // message_delta's counts are cumulative: they replace what came before.
      delta = readUsage(event.usage) ?? delta;
    }
    if (start !== null || delta !== null) ctx.trace.reported = chatUsageOf({ ...start, ...delta });
    ctx.trace.text += readEvent(event).text;
    held.push(JSON.stringify(sent));
    if (event.type !== 'content_block_delta') continue;
    ctx.emit(...held);
    held = [];
  }
  ctx.emit(...held);
}

/** Translates a chat upstream's stream into Anthropic's events. */
async function relayTranslated(ctx: MessagesRun, target: ProviderTarget, timeoutMs: number): Promise<void> {
  const translator = new MessageStreamTranslator({ id: ctx.data.requestId, model: target.alias, inputTokens: ctx.data.promptTokens ?? 0 });
  for await (const chunk of ctx.providers.stream(chatRequest(ctx, target, timeoutMs))) {
    if (chunk.usage) ctx.trace.reported = chunk.usage;
    for (const choice of chunk.choices) ctx.trace.text += producedText(choice.delta);
    ctx.emit(...translator.push(chunk).map((event) => JSON.stringify(event)));
  }
  ctx.emit(...translator.finish(ctx.usage().usage).map((event) => JSON.stringify(event)));
}

/** A streamed message; once its first event reached the client it is never retried. */
async function runStream(ctx: MessagesRun): Promise<FinalEvent> {
  await ctx.attempt(
    (target, timeoutMs) => (speaksMessages(target.provider) ? relayNative(ctx, target, timeoutMs) : relayTranslated(ctx, target, timeoutMs)),
    () => ctx.trace.firstChunkAt === null,
  );
  const { usage, source } = ctx.usage();
  return { type: 'done', payload: JSON.stringify({ usage, usage_source: source }) };
}

/** The Messages operation, worker half. */
export const messagesRunner: OperationRunner<MessagesJob> = {
  run: (ctx) => renamingParams(() => (ctx.data.stream ? runStream(ctx) : runMessage(ctx)), MESSAGES_PARAMS),
  countPrompt: (data) => countPromptTokens(data.body),
  readChunk: (payload) => readEvent(JSON.parse(payload) as Record<string, unknown>),
};
