/** The adapter for Google's Gemini API (generateContent / streamGenerateContent), in OpenAI's chat format. */
import type { ModelOf } from '../../catalog/schema.ts';
import type { ProviderAdapter } from '../types.ts';
import type { UpstreamHttp } from '../shared/http.ts';
import { readJsonBody, sendUpstream, translateBody } from '../shared/send.ts';
import { readGeminiError } from './errors.ts';
import { buildGeminiCall } from './request.ts';
import { parseGeminiCompletion } from './response.ts';
import { translateGeminiStream } from './stream.ts';

/** Builds the adapter on the worker's shared connection pool. */
export function createGeminiAdapter(http: UpstreamHttp): ProviderAdapter<ModelOf<'gemini'>> {
  return {
    async complete(req) {
      const body = await sendUpstream(http, buildGeminiCall(req.target, req.body, false), req, readGeminiError);
      return parseGeminiCompletion(await readJsonBody(body, req.signal), req.target);
    },
    async *stream(req) {
      const body = await sendUpstream(http, buildGeminiCall(req.target, req.body, true), req, readGeminiError);
      yield* translateBody(body, req.signal, (source) => translateGeminiStream(source, req.target));
    },
  };
}
