/** Provider kind → adapter, built once per worker process at startup on one shared connection pool. */
import type { ModelOf } from '../domain/catalog/schema.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../wire/openai-chat.ts';
import type { ProviderName } from './descriptors.ts';
import type { EmbedRequest, NativeMessagesAdapter, ProviderAdapter, ProviderRequest } from './types.ts';
import type { EmbeddingsResponse } from '../wire/openai-embeddings.ts';
import { createUpstreamHttp, type UpstreamHttp, type UpstreamHttpOptions } from './shared/http.ts';
import { createAnthropicAdapter } from './anthropic/index.ts';
import { createGeminiAdapter } from './gemini/index.ts';
import { createOpenAiCompatibleAdapter } from './openai-compatible/index.ts';
import { createSimulatorAdapter } from './simulator/index.ts';

/** What every adapter is built with. */
export interface AdapterContext {
  http: UpstreamHttp;
  /** The headers timeout of upstream calls (the simulator's hang fault waits as long). */
  headersTimeoutMs: number;
}

// A mapped type, so that a provider listed in descriptors.ts without an adapter here does not compile.
const FACTORIES: { [N in ProviderName]: (context: AdapterContext) => ProviderAdapter<ModelOf<N>> } = {
  'openai-compatible': (context) => createOpenAiCompatibleAdapter(context.http),
  anthropic: (context) => createAnthropicAdapter(context.http),
  gemini: (context) => createGeminiAdapter(context.http),
  simulator: (context) => createSimulatorAdapter({ hangTimeoutMs: context.headersTimeoutMs }),
};

/** The adapters of one process, called by the target's provider. */
export interface ProviderRegistry {
  /** A non-streamed completion from the target's provider. */
  complete(request: ProviderRequest): Promise<ChatCompletion>;
  /** A streamed completion from the target's provider. */
  stream(request: ProviderRequest): AsyncIterable<ChatCompletionChunk>;
  /** Embeddings from the target's provider (the catalog admits embeddings models only of providers that embed). */
  embed(request: EmbedRequest): Promise<EmbeddingsResponse>;
  /** Anthropic's Messages API untranslated, from a provider whose descriptor says `nativeMessages`. */
  messages: NativeMessagesAdapter;
  /** Closes the shared connection pool. */
  close(): Promise<void>;
}

/** Builds every adapter once. */
export function createProviderRegistry(options: UpstreamHttpOptions): ProviderRegistry {
  const context: AdapterContext = { http: createUpstreamHttp(options), headersTimeoutMs: options.headersTimeoutMs };
  const adapters = new Map<string, ProviderAdapter>(Object.entries(FACTORIES).map(([name, create]) => [name, create(context) as ProviderAdapter]));
  // The map is keyed by every ProviderName (FACTORIES' type), and a target's provider is one.
  const adapterOf = (request: { target: ProviderRequest['target'] }) => adapters.get(request.target.provider) as ProviderAdapter;
  const nativeMessagesOf = (request: { target: ProviderRequest['target'] }) => {
    const { messages } = adapterOf(request);
    if (!messages) throw new Error(`provider ${request.target.provider} does not speak Anthropic's Messages API`);
    return messages;
  };
  return {
    complete: (request) => adapterOf(request).complete(request),
    stream: (request) => adapterOf(request).stream(request),
    embed: (request) => {
      const { embed } = adapterOf(request);
      if (!embed) throw new Error(`provider ${request.target.provider} has no embeddings, yet '${request.target.alias}' is an embeddings model`);
      return embed(request);
    },
    messages: {
      complete: (request) => nativeMessagesOf(request).complete(request),
      stream: (request) => nativeMessagesOf(request).stream(request),
    },
    close: () => context.http.close(),
  };
}
