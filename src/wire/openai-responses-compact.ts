/**
 * OpenAI's compaction of a Responses conversation (`POST /v1/responses/compact`, the `openai`
 * SDK's `client.responses.compact()`): the request body its door validates and the compacted
 * response it answers with. The shapes follow the SDK's (ResponseCompactParams, CompactedResponse,
 * ResponseCompactionItem in resources/responses/responses.d.ts) and what OpenAI sends: the user
 * messages of the input, kept as they were, then one compaction item. The SDK types `output` as
 * output items, whose messages are the assistant's; the messages kept are the user's, as OpenAI's
 * own answers have them (the SDK's ResponseInputMessageItem), and its doc comment says so.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { InputContentPartSchema, InputItemSchema, ResponseUsageSchema } from './openai-responses.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const OPEN = { additionalProperties: true } as const;

/**
 * The body of `POST /v1/responses/compact` as the door validates it: the SDK's parameters. It
 * admits others: Codex sends its turn's `tools`, `parallel_tool_calls`, `reasoning` and `text` too.
 */
export const ResponsesCompactRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(Type.Union([Type.String(), Type.Array(InputItemSchema)])),
    instructions: Nullable(Type.String()),
    previous_response_id: Nullable(Type.String()),
    prompt_cache_key: Nullable(Type.String()),
    prompt_cache_options: Nullable(Type.Object({}, OPEN)),
    prompt_cache_retention: Nullable(Type.String()),
    service_tier: Nullable(Type.String()),
  },
  OPEN,
);

/** A user message of the input, kept as it was (its content as parts), with an id. */
export const KeptMessageSchema = Type.Object({
  type: Type.Literal('message'),
  id: Type.String(),
  status: Type.Literal('completed'),
  role: Type.Literal('user'),
  content: Type.Array(InputContentPartSchema),
});

/** The compaction item: what the conversation's other items became, to be sent back as it came. */
export const CompactionItemSchema = Type.Object({
  type: Type.Literal('compaction'),
  id: Type.String(),
  encrypted_content: Type.String(),
});

/** The compacted response: the input's user messages, then one compaction item, and the summary call's usage. */
export const CompactedResponseSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('response.compaction'),
  created_at: Type.Integer(),
  output: Type.Array(Type.Union([KeptMessageSchema, CompactionItemSchema])),
  usage: ResponseUsageSchema,
});

/** The request body. */
export type ResponsesCompactRequest = Static<typeof ResponsesCompactRequestSchema>;
/** A user message kept. */
export type KeptMessage = Static<typeof KeptMessageSchema>;
/** The compaction item. */
export type CompactionItem = Static<typeof CompactionItemSchema>;
/** The compacted response. */
export type CompactedResponse = Static<typeof CompactedResponseSchema>;
