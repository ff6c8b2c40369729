/** The adapter for Anthropic's Messages API: OpenAI chat in, Anthropic on the wire, OpenAI chat out; or Anthropic's Messages untranslated. */
import { anthropicDescriptor } from './descriptor.ts';
import type { ModelOf } from '../model.ts';
import type { Provider, ProviderAdapter } from '../types.ts';
import type { UpstreamHttp } from '../shared/http.ts';
import { readJsonBody, sendUpstream, translateBody } from '../shared/send.ts';
import { readAnthropicError } from './errors.ts';
import { buildAnthropicRequest } from './request.ts';
import { parseMessage } from './response.ts';
import { translateStream } from './stream.ts';
import { buildNativeCall, nativeEvents, parseNativeMessage } from './native.ts';

/** Builds the adapter on the worker's shared connection pool. */
export function createAnthropicAdapter(http: UpstreamHttp): ProviderAdapter<ModelOf<typeof anthropicDescriptor>> {
  return {
    async complete(req) {
      const body = await sendUpstream(http, buildAnthropicRequest(req.target, req.body, false), req, readAnthropicError);
      return parseMessage(await readJsonBody(body, req.signal), req.target);
    },
    async *stream(req) {
      const body = await sendUpstream(http, buildAnthropicRequest(req.target, req.body, true), req, readAnthropicError);
      yield* translateBody(body, req.signal, (source) => translateStream(source, req.target));
    },
    messages: {
      async complete(req) {
        const body = await sendUpstream(http, buildNativeCall(req.target, req.body, req.betas, false), req, readAnthropicError);
        return parseNativeMessage(await readJsonBody(body, req.signal));
      },
      async *stream(req) {
        const body = await sendUpstream(http, buildNativeCall(req.target, req.body, req.betas, true), req, readAnthropicError);
        yield* translateBody(body, req.signal, nativeEvents);
      },
    },
  };
}

/** Anthropic's Messages API: its descriptor and its adapter's factory, as the list of providers holds them. */
export const anthropicProvider: Provider<typeof anthropicDescriptor> = {
  descriptor: anthropicDescriptor,
  create: (context) => createAnthropicAdapter(context.http),
};
