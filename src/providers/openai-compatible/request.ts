/** OpenAI chat and embeddings requests → the upstream's HTTP call: OpenAI's own addressing, or Azure OpenAI's. */
import type { ModelOf } from '../model.ts';
import type { openAiCompatibleDescriptor } from './descriptor.ts';
import type { ProviderTarget } from '../types.ts';
import type { UpstreamCall } from '../shared/send.ts';
import type { ChatRequest } from '../../wire/openai-chat.ts';
import type { EmbeddingsRequest } from '../../wire/openai-embeddings.ts';

type Target = ProviderTarget<ModelOf<typeof openAiCompatibleDescriptor>>;

/** The upstream body: the client's fields, with our model and stream settings on top. */
export function buildUpstreamBody(target: Target, body: ChatRequest, stream: boolean): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...body };
  delete rest.stream_options;
  // Usage is always requested so that streamed spend is never recorded as zero; the worker strips
  // the usage chunk when the client did not ask for it.
  return stream
    ? { ...rest, model: target.upstreamModel, stream: true, stream_options: { include_usage: true } }
    : { ...rest, model: target.upstreamModel, stream: false };
}

/**
 * The URL and key header: `{base_url}/{path}` with a bearer key, or for Azure OpenAI
 * `{base_url}/openai/deployments/{deployment}/{path}?api-version=…` with an `api-key` header.
 */
function address(target: Target, path: 'chat/completions' | 'embeddings'): { url: string; auth: Record<string, string> } {
  const base = target.model.base_url.replace(/\/+$/, '');
  const key = target.apiKey !== null && target.apiKey !== '' ? target.apiKey : null;
  const azure = target.model.azure;
  if (azure) {
    const deployment = encodeURIComponent(azure.deployment ?? target.upstreamModel);
    const url = `${base}/openai/deployments/${deployment}/${path}?api-version=${encodeURIComponent(azure.api_version)}`;
    return { url, auth: key === null ? {} : { 'api-key': key } };
  }
  return { url: `${base}/${path}`, auth: key === null ? {} : { authorization: `Bearer ${key}` } };
}

/** The full HTTP call. */
export function buildUpstreamRequest(target: Target, body: ChatRequest, stream: boolean): UpstreamCall {
  const { url, auth } = address(target, 'chat/completions');
  return {
    url,
    headers: { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...auth },
    body: JSON.stringify(buildUpstreamBody(target, body, stream)),
  };
}

/** The embeddings call: the client's fields as sent, with our model. */
export function buildEmbeddingsRequest(target: Target, body: EmbeddingsRequest): UpstreamCall {
  const { url, auth } = address(target, 'embeddings');
  return {
    url,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...auth },
    body: JSON.stringify({ ...body, model: target.upstreamModel }),
  };
}
