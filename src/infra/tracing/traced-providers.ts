/**
 * The provider registry with a CLIENT span around every upstream call, after the GenAI semantic
 * conventions: `{gen_ai.operation.name} {gen_ai.request.model}`. The worker calls the registry
 * once per attempt, so retries and fallbacks are sibling spans under the request's span.
 */
import { SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import type { ProviderRegistry } from '../../providers/registry.ts';
import type { ProviderTarget } from '../../providers/types.ts';
import { isUpstreamError } from '../../providers/shared/upstream-error.ts';
import type { Tracing } from './tracing.ts';
import { ATTR_GEN_AI_OPERATION_NAME } from './gateway-attributes.ts';
import {
  addChunk,
  completionFacts,
  embeddingsFacts,
  messageEventReader,
  messageFacts,
  recordResponse,
  targetAttributes,
  type ResponseFacts,
} from './upstream-attributes.ts';

/** The conventions' operation of a call: a chat (completions and Anthropic's messages), or embeddings. */
type GenAiOperation = 'chat' | 'embeddings';

/** Starts the span of one attempt, a child of the active span (the request's, made by the processor). */
type StartAttempt = (operation: GenAiOperation, target: ProviderTarget) => Span;

/** Attempt spans of one traced registry; a target's attributes are worked out once, since targets are built once per process. */
function attemptStarter(tracer: Tracer): StartAttempt {
  const attributesOf = new WeakMap<ProviderTarget, Attributes>();
  return (operation, target) => {
    let attributes = attributesOf.get(target);
    if (!attributes) {
      attributes = targetAttributes(target);
      attributesOf.set(target, attributes);
    }
    const span = tracer.startSpan(`${operation} ${target.upstreamModel}`, { kind: SpanKind.CLIENT, attributes });
    span.setAttribute(ATTR_GEN_AI_OPERATION_NAME, operation);
    return span;
  };
}

/**
 * Ends a failed attempt with the failure's kind (`timeout`, `rate_limited`, `server_error`…) as
 * `error.type`. Its message is left out: a provider's error message may quote the request.
 */
function endFailed(span: Span, error: unknown): void {
  span.setAttribute(ATTR_ERROR_TYPE, isUpstreamError(error) ? error.kind : error instanceof Error ? error.name : '_OTHER');
  if (isUpstreamError(error) && error.status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, error.status);
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

async function traced<T>(
  start: StartAttempt,
  operation: GenAiOperation,
  target: ProviderTarget,
  call: () => Promise<T>,
  facts: (value: T) => ResponseFacts,
): Promise<T> {
  const span = start(operation, target);
  try {
    const value = await call();
    recordResponse(span, facts(value));
    span.end();
    return value;
  } catch (error) {
    endFailed(span, error);
    throw error;
  }
}

/**
 * A stream's span lasts from the first read, which opens it, to its end; a consumer that stops
 * reading early (the client went away) ends it with what was seen so far.
 */
async function* tracedStream<T>(
  start: StartAttempt,
  target: ProviderTarget,
  open: () => AsyncIterable<T>,
  read: (facts: ResponseFacts, item: T) => void,
): AsyncIterable<T> {
  const span = start('chat', target);
  const facts: ResponseFacts = { finishReasons: [] };
  let failed = false;
  try {
    for await (const item of open()) {
      read(facts, item);
      yield item;
    }
  } catch (error) {
    failed = true;
    recordResponse(span, facts);
    endFailed(span, error);
    throw error;
  } finally {
    if (!failed) {
      recordResponse(span, facts);
      span.end();
    }
  }
}

/** `providers` with every call traced; `providers` itself when tracing is off. */
export function traceProviders(providers: ProviderRegistry, tracing: Tracing): ProviderRegistry {
  if (!tracing.enabled) return providers;
  const start = attemptStarter(tracing.tracer);
  return {
    complete: (request) => traced(start, 'chat', request.target, () => providers.complete(request), completionFacts),
    stream: (request) => tracedStream(start, request.target, () => providers.stream(request), addChunk),
    embed: (request) => traced(start, 'embeddings', request.target, () => providers.embed(request), embeddingsFacts),
    messages: {
      complete: (request) => traced(start, 'chat', request.target, () => providers.messages.complete(request), messageFacts),
      stream: (request) => tracedStream(start, request.target, () => providers.messages.stream(request), messageEventReader()),
    },
    close: () => providers.close(),
  };
}
