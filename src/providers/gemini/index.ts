/** The adapter for Google's Gemini API (generateContent / streamGenerateContent / batchEmbedContents), in OpenAI's formats. */
import { geminiDescriptor } from './descriptor.ts';
import type { ModelOf } from '../model.ts';
import type { Provider, ProviderAdapter } from '../types.ts';
import type { UpstreamHttp } from '../shared/http.ts';
import { readJsonBody, sendUpstream, translateBody } from '../shared/send.ts';
import { readGeminiError } from './errors.ts';
import { buildGeminiCall } from './request.ts';
import { parseGeminiCompletion } from './response.ts';
import { translateGeminiStream } from './stream.ts';
import { buildGeminiEmbedCall, parseGeminiEmbeddings } from './embeddings.ts';
import { inputTexts } from '../shared/embeddings.ts';

/** Builds the adapter on the worker's shared connection pool. */
export function createGeminiAdapter(http: UpstreamHttp): ProviderAdapter<ModelOf<typeof geminiDescriptor>> {
  return {
    async complete(req) {
      const body = await sendUpstream(http, buildGeminiCall(req.target, req.body, false), req, readGeminiError);
      return parseGeminiCompletion(await readJsonBody(body, req.signal), req.target);
    },
    async *stream(req) {
      const body = await sendUpstream(http, buildGeminiCall(req.target, req.body, true), req, readGeminiError);
      yield* translateBody(body, req.signal, (source) => translateGeminiStream(source, req.target));
    },
    async embed(req) {
      const texts = inputTexts(req.body.input);
      if (texts === null) throw new Error('token arrays reached the Gemini adapter; the door refuses them');
      const body = await sendUpstream(http, buildGeminiEmbedCall(req.target, req.body, texts), req, readGeminiError);
      return parseGeminiEmbeddings(await readJsonBody(body, req.signal), req.target, req.body, texts.length);
    },
  };
}

/** Google's Gemini API: its descriptor and its adapter's factory, as the list of providers holds them. */
export const geminiProvider: Provider<typeof geminiDescriptor> = {
  descriptor: geminiDescriptor,
  create: (context) => createGeminiAdapter(context.http),
};
