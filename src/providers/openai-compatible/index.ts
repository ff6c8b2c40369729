/** The adapter for OpenAI and every OpenAI-compatible server (Azure OpenAI, vLLM, Ollama, Groq…). */
import { openAiCompatibleDescriptor } from './descriptor.ts';
import type { ModelOf } from '../model.ts';
import type { Provider, ProviderAdapter } from '../types.ts';
import type { UpstreamHttp } from '../shared/http.ts';
import { readJsonBody, sendUpstream, translateBody } from '../shared/send.ts';
import { readOpenAiError } from './errors.ts';
import { buildEmbeddingsRequest, buildUpstreamRequest } from './request.ts';
import { parseCompletion, parseEmbeddings } from './response.ts';
import { inputItems } from '../shared/embeddings.ts';
import { translateStream } from './stream.ts';

/** Builds the adapter on the worker's shared connection pool. */
export function createOpenAiCompatibleAdapter(http: UpstreamHttp): ProviderAdapter<ModelOf<typeof openAiCompatibleDescriptor>> {
  return {
    async complete(req) {
      const body = await sendUpstream(http, buildUpstreamRequest(req.target, req.body, false), req, readOpenAiError);
      return parseCompletion(await readJsonBody(body, req.signal), req.target);
    },
    async *stream(req) {
      const body = await sendUpstream(http, buildUpstreamRequest(req.target, req.body, true), req, readOpenAiError);
      yield* translateBody(body, req.signal, (source) => translateStream(source, req.target));
    },
    async embed(req) {
      const body = await sendUpstream(http, buildEmbeddingsRequest(req.target, req.body), req, readOpenAiError);
      return parseEmbeddings(await readJsonBody(body, req.signal), req.target, inputItems(req.body.input).length);
    },
  };
}

/** OpenAI and the servers of its format: its descriptor and its adapter's factory, as the list of providers holds them. */
export const openAiCompatibleProvider: Provider<typeof openAiCompatibleDescriptor> = {
  descriptor: openAiCompatibleDescriptor,
  create: (context) => createOpenAiCompatibleAdapter(context.http),
};
