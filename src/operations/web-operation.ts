/**
 * The operation seam, web half: what the web tier does with a request of an operation (a chat
 * completion, embeddings, an Anthropic message, a response). One admission chain (the web tier's
 * handle-request.ts) serves every operation; each supplies what differs: how its body resolves to
 * models and tokens, which of its texts the PII policy reads, what its job carries and how its
 * stream is framed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CatalogEntry } from '../domain/catalog/load-catalog.ts';
import type { CatalogFile } from '../domain/catalog/schema.ts';
import type { PromptCache } from '../domain/prompts/prompt-cache.ts';
import type { SseFraming } from './sse-framing.ts';
import type { TenantSettings } from '../domain/tenants/tenant-settings.ts';
import type { KeptAnswer } from '../infra/responses/kept-answer.ts';
import type { ConversationStore } from './responses/conversation.ts';
import type { TextReplacer } from '../domain/pii/apply-policy.ts';

/** What resolving a request may read besides its body. */
export interface PlanContext {
  catalog: CatalogFile;
  prompts: PromptCache;
  /** Kept responses, which a request may continue or refer to. */
  responses: ConversationStore;
  tenantId: string;
  requestId: string;
  settings: TenantSettings;
  headers: IncomingHttpHeaders;
}

/** What an operation found out about one validated request before admission. */
export interface RequestPlan<Body> {
  /** The body to run: a named prompt's templates applied; the PII policy has not read it yet. */
  body: Body;
  /** The alias the client asked for (a model or a tier). */
  requestedModel: string;
  /** The catalog models that can serve it, in order. */
  candidates: CatalogEntry[];
  /** Prompt tokens, when they had to be counted (the worker then need not count them again). */
  promptTokens: number | undefined;
  /** Prompt tokens as estimated without the tokenizer: what rate limits charge when they were not counted. */
  promptEstimate: number;
  /**
   * Prompt tokens at most, whatever the provider's tokenizer (bytes bound byte-level tokens): what a budget reserves,
   * so that the reservation bounds the request's cost and concurrent requests never spend past a limit.
   */
  promptBound: number;
  /** The output tokens the client allows; null: the model's own maximum. */
  maxOutputTokens: number | null;
  stream: boolean;
  /** The named prompt version the request came from. */
  prompt: { name: string; version: number } | null;
  /** The id of the object the request makes (a Response's `resp_…`), which its usage record carries. */
  responseId?: string;
}

/** A request its client does not wait for (a background response), as it is accepted. */
export interface DetachedRequest {
  /** What is kept of it from now on: the client's answer is its body. */
  kept: KeptAnswer;
  /** A stream's first event, before the job's. */
  opening: string;
}

/**
 * One operation as the web tier serves it: `Body` as the door validated it, `Planned` the body to
 * run once resolved (for chat, a named prompt's request becomes a plain one), `Payload` what its
 * job carries besides the fields every job has.
 */
export interface WebOperation<Body, Planned, Payload extends object> {
  /** How its stream is written, and its errors after the stream began. */
  readonly framing: SseFraming;
  /**
   * Response headers decided from the body alone, set before admission so that every answer,
   * a stream's included, carries them; throwing refuses the request before any Redis call.
   */
  replyHeaders?(body: Body): Readonly<Record<string, string>>;
  /** Resolves the request's model and counts (refusing what no candidate can serve), before any Redis call. */
  plan(body: Body, context: PlanContext): RequestPlan<Planned> | Promise<RequestPlan<Planned>>;
  /** The body with each text a provider reads passed through `replace` (the PII policy's scan and mask). */
  mapTexts(body: Planned, replace: TextReplacer): Planned;
  /** What the job carries for this operation: the body to forward, its options. */
  jobPayload(body: Planned, plan: RequestPlan<Planned>): Payload;
  /** A request answered at once and run later (a background response); null, or no method: the client waits for the answer. */
  detach?(body: Planned, job: { requestId: string; enqueuedAt: number }): DetachedRequest | null;
}
