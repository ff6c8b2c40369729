/** One delivery attempt: the event, signed, POSTed to the endpoint; redirects are not followed. */
import { performance } from 'node:perf_hooks';
import { request, type Dispatcher } from 'undici';
import { signingSecrets, webhookHeaders } from '../../domain/webhooks/signing.ts';
import { webhookEventBody, type WebhookEvent } from '../../domain/webhooks/webhook-event.ts';
import type { WebhookEndpoint } from '../store/repository.ts';

/** How an attempt went. */
export interface WebhookAttempt {
  /** `succeeded` for a 2xx answer only; a 3xx is a failure (redirects are not followed). */
  status: 'succeeded' | 'failed';
  /** Null when no answer came. */
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
}

/** What a sender needs: the agent (src/infra/webhooks/guarded-agent.ts) and the time an endpoint has to answer. */
export interface WebhookSenderOptions {
  agent: Dispatcher;
  timeoutMs: number;
}

// Enough of a failed answer's body to tell why, in the delivery's error.
const ERROR_EXCERPT_BYTES = 256;

/** Sends one attempt; never throws for the endpoint's failure (only when `signal`, the job's, aborts). */
export async function sendWebhook(
  options: WebhookSenderOptions,
  endpoint: WebhookEndpoint,
  event: WebhookEvent,
  signal?: AbortSignal,
): Promise<WebhookAttempt> {
  const body = webhookEventBody(event);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'llm-gateway-webhooks/1',
    ...webhookHeaders(signingSecrets(endpoint), event.id, body),
  };
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const response = await request(endpoint.url, {
      method: 'POST',
      headers,
      body,
      dispatcher: options.agent,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const httpStatus = response.statusCode;
    if (httpStatus >= 200 && httpStatus < 300) {
      await response.body.dump();
      return { status: 'succeeded', httpStatus, latencyMs: latency(), error: null };
    }
    const excerpt = await readExcerpt(response.body);
    return { status: 'failed', httpStatus, latencyMs: latency(), error: `HTTP ${httpStatus}${excerpt ? `: ${excerpt}` : ''}` };
  } catch (error) {
    if (signal?.aborted) throw error;
    return { status: 'failed', httpStatus: null, latencyMs: latency(), error: describeFailure(error, timeout.aborted, options.timeoutMs) };
  }
}

async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  let text = '';
  for await (const chunk of body) {
    text += (chunk as Buffer).toString('utf8');
    if (text.length >= ERROR_EXCERPT_BYTES) break;
  }
  body.destroy();
  return text.slice(0, ERROR_EXCERPT_BYTES).replace(/\s+/g, ' ').trim();
}

/** The reason of an attempt that got no answer, in a few words. */
function describeFailure(error: unknown, timedOut: boolean, timeoutMs: number): string {
  const failure = error instanceof Error ? error : new Error(String(error));
  // undici wraps the connect failure; the cause names it (ECONNREFUSED, a blocked address…).
  const cause = failure.cause instanceof Error ? failure.cause : failure;
  const code = (cause as NodeJS.ErrnoException).code;
  if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `no answer within ${timeoutMs} ms`;
  if (code === 'ECONNREFUSED') return 'connection refused';
  return code && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
}
