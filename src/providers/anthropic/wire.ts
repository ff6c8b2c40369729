/**
 * What the adapter writes to and reads from Anthropic's Messages API, derived from the schemas of
 * src/wire/anthropic-messages.ts. The door admits any block type and loose fields; what the adapter
 * sends is narrower: each block type with the fields it must have, so that the compiler checks
 * every block the adapter builds.
 */
import type {
  ContentBlockParam,
  ErrorBody,
  MessageParam,
  MessagesRequest,
  OutputConfig,
  Source,
  ThinkingConfig,
  ToolChoiceParam,
  ToolParam,
} from '../../wire/anthropic-messages.ts';

/** The fields R of T required and the fields O optional, none of them null. */
type Shape<T, R extends keyof T, O extends keyof T = never> = { [F in R]-?: NonNullable<T[F]> } & { [F in O]?: NonNullable<T[F]> };

/** The variant of a flat schema type whose `type` is K. */
type Variant<T extends { type?: unknown }, K extends string, R extends keyof T = never, O extends keyof T = never> = { type: K } & Shape<T, R, O>;

/** A text block. */
export type AnthropicTextBlock = Variant<ContentBlockParam, 'text', 'text', 'cache_control'>;

/** An image block: base64 data or a URL the API fetches. */
export type AnthropicImageBlock = Variant<ContentBlockParam, 'image', never, 'cache_control'> & {
  source: Variant<Source, 'base64', 'media_type' | 'data'> | Variant<Source, 'url', 'url'>;
};

/** A document block: a base64 PDF or plain text. */
export type AnthropicDocumentBlock = Variant<ContentBlockParam, 'document', never, 'cache_control'> & {
  source: (Variant<Source, 'base64', 'data'> & { media_type: 'application/pdf' }) | (Variant<Source, 'text', 'data'> & { media_type: 'text/plain' });
};

/** A tool call the assistant made. */
export type AnthropicToolUseBlock = Variant<ContentBlockParam, 'tool_use', 'id' | 'name' | 'input'>;

/** The answer to one tool call. */
export type AnthropicToolResultBlock = Variant<ContentBlockParam, 'tool_result', 'tool_use_id'> & {
  content: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
};

/** Extended thinking, with the signature the API checks when it comes back. */
export type AnthropicThinkingBlock = Variant<ContentBlockParam, 'thinking', 'thinking' | 'signature'>;

/** Thinking the API encrypted; sent back as it came. */
export type AnthropicRedactedThinkingBlock = Variant<ContentBlockParam, 'redacted_thinking', 'data'>;

/** Any block the adapter sends in a message. */
export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

/** One turn of `messages` (system prompts go in the top-level `system`). */
export interface AnthropicMessageParam {
  role: Exclude<MessageParam['role'], 'system'>;
  content: string | AnthropicContentBlock[];
}

/** A client tool. */
export type AnthropicTool = Shape<ToolParam, 'name' | 'input_schema', 'description' | 'cache_control' | 'strict'>;

/** How the model must use tools. */
export type AnthropicToolChoice =
  | Variant<ToolChoiceParam, 'auto' | 'any', never, 'disable_parallel_tool_use'>
  | Variant<ToolChoiceParam, 'tool', 'name', 'disable_parallel_tool_use'>
  | Variant<ToolChoiceParam, 'none'>;

/** Extended thinking settings. */
export type AnthropicThinking =
  Variant<ThinkingConfig, 'enabled', 'budget_tokens'> | Variant<ThinkingConfig, 'adaptive', never, 'display'> | Variant<ThinkingConfig, 'disabled'>;

/** Adaptive effort levels of `output_config.effort`. */
export type AnthropicEffort = NonNullable<OutputConfig['effort']>;

/** Output settings: effort (adaptive thinking) and structured output. */
export type AnthropicOutputConfig = Shape<OutputConfig, never, 'effort' | 'format'>;

/** The body of POST /v1/messages. */
export type AnthropicRequest = Pick<MessagesRequest, 'model' | 'max_tokens' | 'stop_sequences' | 'temperature' | 'top_p' | 'top_k'> & {
  messages: AnthropicMessageParam[];
  system?: AnthropicTextBlock[];
  metadata?: Shape<NonNullable<MessagesRequest['metadata']>, 'user_id'>;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  thinking?: AnthropicThinking;
  output_config?: AnthropicOutputConfig;
  stream?: true;
};

/** An error body (`{type:'error', error:{type, message}}`), as HTTP bodies and `event: error` carry it. */
export type AnthropicErrorBody = Pick<ErrorBody, 'type' | 'error'>;

/** The `error` object of an error body or event. */
export type AnthropicErrorDetail = AnthropicErrorBody['error'];
