/**
 * Names of the attributes and events on the gateway's spans: its own (`gateway.*`), and those of
 * the GenAI semantic conventions, which are still incubating: OpenTelemetry advises copying such
 * names rather than importing `@opentelemetry/semantic-conventions/incubating`, whose exports may
 * change in a minor release.
 */

/** The gateway's request id (`req_…`), as in `x-request-id` and the logs. */
export const ATTR_GATEWAY_REQUEST_ID = 'gateway.request_id';
/** The tenant of the authenticated caller. */
export const ATTR_GATEWAY_TENANT_ID = 'gateway.tenant_id';
/** The client went away before its response ended. */
export const ATTR_GATEWAY_CLIENT_DISCONNECTED = 'gateway.client_disconnected';
/** The model or tier alias the client asked for. */
export const ATTR_GATEWAY_REQUESTED_MODEL = 'gateway.requested_model';
/** The catalog alias an upstream call served (the one that answered, on the request's span). */
export const ATTR_GATEWAY_MODEL_ALIAS = 'gateway.model_alias';
/** The request was streamed. */
export const ATTR_GATEWAY_STREAM = 'gateway.stream';
/** The tenant's PII policy and the categories it found (never the values). */
export const ATTR_GATEWAY_PII_MODE = 'gateway.pii.mode';
export const ATTR_GATEWAY_PII_CATEGORIES = 'gateway.pii.categories';
/** What admission decided: `run`, or `relay` an earlier request's events (idempotent retry). */
export const ATTR_GATEWAY_ADMISSION = 'gateway.admission';
/** The tenant's requests queued or running when this one was admitted. */
export const ATTR_GATEWAY_QUEUED = 'gateway.queued';
/** How the worker's run ended: `succeeded`, `failed` or `cancelled` (the usage record's status). */
export const ATTR_GATEWAY_STATUS = 'gateway.status';
/** Upstream attempts of the request, retries and fallbacks included. */
export const ATTR_GATEWAY_ATTEMPTS = 'gateway.attempts';
/** Milliseconds between enqueue and the worker's start. */
export const ATTR_GATEWAY_QUEUE_WAIT_MS = 'gateway.queue_wait_ms';
/** Where the token counts came from: `provider` or `estimated` (the tokenizer). */
export const ATTR_GATEWAY_USAGE_SOURCE = 'gateway.usage_source';
/** The request's cost in micro-units of the tenant's currency. */
export const ATTR_GATEWAY_COST_MICROS = 'gateway.cost_micros';

/** Events of the web span, one per admission step done (src/web/admission/handle-request.ts). */
export const EVENT_AUTHENTICATED = 'gateway.authenticated';
export const EVENT_RESOLVED = 'gateway.resolved';
export const EVENT_PII_SCREENED = 'gateway.pii_screened';
export const EVENT_ADMITTED = 'gateway.admitted';
export const EVENT_ENQUEUED = 'gateway.enqueued';

export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const ATTR_GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const ATTR_GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
