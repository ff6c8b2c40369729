/**
 * The routes a batch's lines may go to, and the operation (job kind) each runs: OpenAI's three
 * through /v1/batches, Anthropic's Messages through /v1/messages/batches.
 */
export const OPENAI_BATCH_ENDPOINTS = {
  '/v1/chat/completions': 'chat',
  '/v1/embeddings': 'embeddings',
  '/v1/responses': 'responses',
} as const;

/** The route of every line of an Anthropic Message Batch. */
export const MESSAGE_BATCH_ENDPOINT = '/v1/messages';

/** An endpoint a batch's lines may name. */
export type BatchEndpoint = keyof typeof OPENAI_BATCH_ENDPOINTS | typeof MESSAGE_BATCH_ENDPOINT;

/** The job kind a batch's lines run as. */
export function operationOfEndpoint(endpoint: string): string | null {
  if (endpoint === MESSAGE_BATCH_ENDPOINT) return 'messages';
  return Object.hasOwn(OPENAI_BATCH_ENDPOINTS, endpoint) ? OPENAI_BATCH_ENDPOINTS[endpoint as keyof typeof OPENAI_BATCH_ENDPOINTS] : null;
}

/** The one completion window OpenAI's Batch API offers. */
export const COMPLETION_WINDOW = '24h';
