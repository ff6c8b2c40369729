/** OpenAI chat body → the upstream's request: URL, headers and JSON body. */
import type { ProviderTarget } from '../types.ts';
import { UpstreamError } from '../shared/upstream-error.ts';

/** What undici needs to send one chat completion call. */
export interface UpstreamHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The upstream body: the client's fields, with our model and stream settings on top. */
export function buildUpstreamBody(target: ProviderTarget, body: Record<string, unknown>, stream: boolean): Record<string, unknown> {
  const rest = { ...body };
  delete rest.stream_options;
  // Usage is always requested so that streamed spend is never recorded as zero; the worker strips
  // the usage chunk when the client did not ask for it.
  return stream
    ? { ...rest, model: target.upstreamModel, stream: true, stream_options: { include_usage: true } }
    : { ...rest, model: target.upstreamModel, stream: false };
}

/** The full HTTP call to `${baseUrl}/chat/completions`. */
export function buildUpstreamRequest(target: ProviderTarget, body: Record<string, unknown>, stream: boolean): UpstreamHttpRequest {
  if (target.baseUrl === null) {
    throw new UpstreamError('client_error', `Model alias '${target.alias}' has no base_url`);
  }
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
  };
  if (target.apiKey !== null && target.apiKey !== '') headers.authorization = `Bearer ${target.apiKey}`;
  return {
    url: `${target.baseUrl.replace(/\/+$/, '')}/chat/completions`,
    headers,
    body: JSON.stringify(buildUpstreamBody(target, body, stream)),
  };
}
