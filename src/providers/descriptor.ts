/** What a provider declares about itself; the catalog schema and the registry are built from these. */
import { Type, type TProperties } from '@sinclair/typebox';
import type { ChatRequest } from '../wire/openai-chat.ts';
import type { EmbeddingsRequest } from '../wire/openai-embeddings.ts';
import { InvalidValueError } from '../errors/gateway-error.ts';

/** Which operations a provider serves. */
export interface ProviderCapabilities {
  readonly chat: boolean;
  readonly stream: boolean;
  readonly embed: boolean;
  /** It speaks Anthropic's Messages API itself: a client of /v1/messages reaches it untranslated. */
  readonly nativeMessages: boolean;
}

/** One provider kind: its catalog options, capabilities and the OpenAI parameters it honours. */
export interface ProviderDescriptor<Name extends string = string, Options extends TProperties = TProperties> {
  /** The catalog's `provider` value. */
  readonly name: Name;
  /** Catalog fields of this provider's models, besides the ones every model has (src/domain/catalog/schema.ts). */
  readonly options: Options;
  readonly capabilities: ProviderCapabilities;
  /**
   * The OpenAI chat parameters it can honour, besides `messages`; a request with another one
   * is refused at the door (422 `unsupported_parameter`). Null: every parameter is forwarded.
   */
  readonly params: ReadonlySet<string> | null;
  /** The content part types it can take (`text`, `image_url`, …); null: every type is forwarded. */
  readonly contentParts: ReadonlySet<string> | null;
  /** A value of a supported parameter that it cannot express, found before the request is queued. */
  readonly unsupported?: (request: ChatRequest) => UnsupportedUse | null;
  /** The same for an embeddings request. */
  readonly unsupportedEmbedding?: (request: EmbeddingsRequest) => UnsupportedUse | null;
  readonly telemetry: ProviderTelemetry;
}

/** What a trace says of a call to a provider (OpenTelemetry's GenAI conventions). */
export interface ProviderTelemetry {
  /**
   * `gen_ai.provider.name` of a model's calls: the product the client speaks to, read from the
   * model's catalog entry (every server of OpenAI's format is `openai`, but Azure OpenAI).
   */
  system(model: Readonly<Record<string, unknown>>): string;
  /** The API root of a model whose entry names no `base_url`; null when there is no server. */
  readonly defaultBaseUrl: string | null;
}

/** A use of a parameter a provider cannot serve: the parameter's path and what of it. */
export interface UnsupportedUse {
  param: string;
  detail: string;
}

/** The first file part that names an uploaded file (`file_id`, OpenAI's files API) instead of carrying its data. */
export function uploadedFilePart(request: ChatRequest): UnsupportedUse | null {
  for (const [i, message] of request.messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    const j = message.content.findIndex((part) => part.type === 'file' && part.file?.file_data === undefined && part.file?.file_id !== undefined);
    if (j !== -1) return { param: `messages[${i}].content[${j}].file.file_id`, detail: "an uploaded file's id; send the file inline as file_data" };
  }
  return null;
}

/** The first message with the deprecated `function` role, which has no call id to answer (Anthropic and Gemini need one). */
export function functionRoleMessage(request: ChatRequest): UnsupportedUse | null {
  const index = request.messages.findIndex((message) => message.role === 'function');
  return index === -1 ? null : { param: `messages[${index}].role`, detail: "the deprecated 'function' role; send a 'tool' message with its tool_call_id" };
}

/** The reasoning efforts a provider that translates `reasoning_effort` into its own reasoning settings takes. */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** Reasoning efforts a catalog entry may set as its default. */
export const ReasoningEffortSchema = Type.Union(REASONING_EFFORTS.map((effort) => Type.Literal(effort)));

/** The effort of a request (or its model's default); null for none; 400 `invalid_value` naming `reasoning_effort` for one not in REASONING_EFFORTS. */
export function reasoningEffortOf(value: string | null | undefined): ReasoningEffort | null {
  if (value === undefined || value === null) return null;
  if (!(REASONING_EFFORTS as readonly string[]).includes(value))
    throw new InvalidValueError('reasoning_effort', `reasoning_effort must be one of ${REASONING_EFFORTS.join(', ')}.`);
  return value as ReasoningEffort;
}

/** The catalog fields of a provider reached over HTTP with a key from the environment. */
export const API_KEY_ENV_OPTION = {
  api_key_env: Type.Optional(Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$', description: 'Environment variable holding the provider key.' })),
};

/** A provider's `base_url` when it has a public default. */
export const OPTIONAL_BASE_URL_OPTION = {
  base_url: Type.Optional(Type.String({ pattern: '^https?://', description: "Where the provider's API is; absent: its public endpoint." })),
};
