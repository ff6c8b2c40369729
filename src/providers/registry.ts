/** Provider kind → adapter, built once per worker process at startup on one shared connection pool, from the list of providers. */
import type { ChatCompletion, ChatCompletionChunk } from '../wire/openai-chat.ts';
import type { AdapterContext, EmbedRequest, NativeMessagesAdapter, ProviderAdapter, ProviderRequest } from './types.ts';
import { PROVIDERS } from './index.ts';
import type { EmbeddingsResponse } from '../wire/openai-embeddings.ts';
import { createUpstreamHttp, type UpstreamHttpOptions } from './shared/http.ts';

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
  // Each adapter is typed by its own provider's model and called only with that provider's targets.
  const adapters = new Map<string, ProviderAdapter>(PROVIDERS.map((provider) => [provider.descriptor.name, provider.create(context) as ProviderAdapter]));
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
