/**
 * The parts of Anthropic's Messages API wire format (anthropic-version 2023-06-01) that the adapter
 * writes and reads: request bodies, response messages, stream events, error bodies. Types only.
 */

/** Prompt-caching marker; `ttl` is `5m` or `1h`. Copied from the client's part as it was sent. */
export interface AnthropicCacheControl {
  type: string;
  ttl?: string;
  [field: string]: unknown;
}

/** A text block. */
export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  cache_control?: AnthropicCacheControl;
}

/** An image block: base64 data or a URL the API fetches. */
export interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  cache_control?: AnthropicCacheControl;
}

/** A document block: a base64 PDF or plain text. */
export interface AnthropicDocumentBlock {
  type: 'document';
  source: { type: 'base64'; media_type: 'application/pdf'; data: string } | { type: 'text'; media_type: 'text/plain'; data: string };
  cache_control?: AnthropicCacheControl;
}

/** A tool call the assistant made. */
export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** The answer to one tool call. */
export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
}

/** Extended thinking, with the signature the API checks when it comes back. */
export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** Thinking the API encrypted; sent back as it came. */
export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** Any block the adapter sends in a message. */
export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

/** One turn of `messages`. */
export interface AnthropicMessageParam {
  role: 'user' | 'assistant';
  content: string | AnthropicContentBlock[];
}

/** A client tool. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
  strict?: true;
}

/** How the model must use tools. */
export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: true }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: true }
  | { type: 'none' };

/** Extended thinking settings. */
export type AnthropicThinking = { type: 'enabled'; budget_tokens: number } | { type: 'adaptive'; display?: string } | { type: 'disabled' };

/** Adaptive effort levels of `output_config.effort`. */
export type AnthropicEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** Output settings: effort (adaptive thinking) and structured output. */
export interface AnthropicOutputConfig {
  effort?: AnthropicEffort;
  format?: { type: 'json_schema'; schema: Record<string, unknown> };
}

/** The body of POST /v1/messages. */
export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessageParam[];
  system?: AnthropicTextBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id: string };
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  thinking?: AnthropicThinking;
  output_config?: AnthropicOutputConfig;
  stream?: true;
}

/** Token counts as Anthropic reports them; the cache fields may be absent or null. */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** The `error` object of an error body or event. */
export interface AnthropicErrorDetail {
  type: string;
  message: string;
}

/** An error body (`{type:'error', error:{type, message}}`), as HTTP bodies and `event: error` carry it. */
export interface AnthropicErrorBody {
  type: 'error';
  error: AnthropicErrorDetail;
}
