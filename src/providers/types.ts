/** The provider seam: what the worker hands an adapter, and what an adapter gives back (OpenAI's chat format). */
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../wire/openai-chat.ts';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../wire/openai-embeddings.ts';
import type { MessagesRequest } from '../wire/anthropic-messages.ts';
import type { ProviderDescriptor } from './descriptor.ts';
import type { AnyModel } from './model.ts';
import type { UpstreamHttp } from './shared/http.ts';

/** Where and how to reach one upstream model, resolved from the catalog at startup. */
export interface ProviderTarget<M extends AnyModel = AnyModel> {
  /** The catalog alias the target serves. */
  alias: string;
  /** The deployment of the alias: its id in the catalog (the alias itself for an alias written as one target). */
  deployment: string;
  provider: M['provider'];
  upstreamModel: string;
  /** The catalog entry, with its provider's own options. */
  model: M;
  /** The provider key read from the variable `api_key_env` names; null when none is set. */
  apiKey: string | null;
}

/** One call to an upstream model. */
export interface ProviderRequest<M extends AnyModel = AnyModel, Body = ChatRequest> {
  target: ProviderTarget<M>;
  /**
   * The OpenAI request as the client sent it, minus `model` (and for chat `stream` and
   * `stream_options`), which the adapter sets, and minus the gateway's own fields.
   */
  body: Body;
  signal: AbortSignal;
  /**
   * What is left of the request's retry budget: the longest this attempt may wait for the response
   * to begin, and for each next piece of it (the configured upstream timeouts still apply when shorter).
   */
  timeoutMs: number;
}

/** One provider kind's translation; the worker builds each once, at startup. */
export interface ProviderAdapter<M extends AnyModel = AnyModel> {
  /** A non-streamed completion. Throws UpstreamError on any failure. */
  complete(request: ProviderRequest<M>): Promise<ChatCompletion>;
  /**
   * A streamed completion, always with the provider's usage chunk when it reports one
   * (the worker strips it when the client did not ask). Throws UpstreamError on any failure,
   * including a stream that ends without its terminator.
   */
  stream(request: ProviderRequest<M>): AsyncIterable<ChatCompletionChunk>;
  /**
   * Embeddings, in the order of the inputs and in the encoding asked for; `usage` absent when the
   * provider reports none. Only the providers whose descriptor says `embed` have it.
   */
  embed?(request: EmbedRequest<M>): Promise<EmbeddingsResponse>;
  /**
   * Anthropic's Messages API as the client sent it, untranslated; only the providers whose
   * descriptor says `nativeMessages` have it.
   */
  messages?: NativeMessagesAdapter<M>;
}

/** A Messages API request as a job carries it: without `model` and `stream`, which each call sets. */
export type MessagesBody = Omit<MessagesRequest, 'model' | 'stream'>;

/** One native Messages call: the body, and the `anthropic-beta` flags the client sent. */
export type NativeMessagesRequest<M extends AnyModel = AnyModel> = ProviderRequest<M, MessagesBody> & { betas: readonly string[] };

/** A message as the upstream answered it. */
export type NativeMessage = Record<string, unknown> & { type: 'message'; content: unknown[] };

/** One event of a native stream, as the upstream sent it. */
export type NativeEvent = Record<string, unknown> & { type: string };

/** A provider that speaks Anthropic's Messages API itself. */
export interface NativeMessagesAdapter<M extends AnyModel = AnyModel> {
  complete(request: NativeMessagesRequest<M>): Promise<NativeMessage>;
  /** The events up to message_stop; an `event: error` and a stream cut short throw UpstreamError. */
  stream(request: NativeMessagesRequest<M>): AsyncIterable<NativeEvent>;
}

/** One embeddings call. */
export type EmbedRequest<M extends AnyModel = AnyModel> = ProviderRequest<M, EmbeddingsRequest>;

/** What every adapter is built with: the worker's one connection pool, and its upstream timeouts. */
export interface AdapterContext {
  http: UpstreamHttp;
  /** The headers timeout of upstream calls (the simulator's hang fault waits as long). */
  headersTimeoutMs: number;
}

/**
 * A provider: its descriptor (the data the catalog and the door read) and its adapter's factory. The
 * adapter is typed by its own model inside the provider's folder and opaque here: the catalog's model
 * type is made from the descriptors of the list of providers, so the list cannot name it. The registry,
 * which calls an adapter only with targets of its own provider, gives it back its type.
 */
export interface Provider<D extends ProviderDescriptor = ProviderDescriptor> {
  readonly descriptor: D;
  create(context: AdapterContext): object;
}
