/** The durable store's one interface; every adapter (PostgreSQL, MongoDB) implements all of it. */
import type { WebhookEvent, WebhookEventType } from '../../domain/webhooks/webhook-event.ts';

/** Roles of DESIGN.md; what each may do is decided in src/web/auth/permissions.ts. */
export const ROLES = ['admin', 'developer', 'app', 'auditor'] as const;
/** A principal's role. */
export type Role = (typeof ROLES)[number];

/** A customer of the gateway; every record of every other kind belongs to exactly one. */
export interface Tenant {
  id: string;
  name: string;
  /** A disabled tenant's credentials (its keys and JWTs) are refused; its data stays. */
  disabled: boolean;
  createdAt: Date;
}

/** A key's own limits; null: the plan's (or the configured default) applies. */
export interface ApiKeyLimits {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  /** Requests of the key admitted and not yet ended (queued or running) at once. */
  maxConcurrent: number | null;
}

/** An API key as stored: only the SHA-256 of the secret, never the secret. */
export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  role: Role;
  /** What the key is for, as its creator named it. */
  name: string | null;
  secretHash: string;
  createdAt: Date;
  /** After this instant the key is refused; null: it does not expire. */
  expiresAt: Date | null;
  revokedAt: Date | null;
  limits: ApiKeyLimits;
}

/** Tenants. */
export interface TenantRepository {
  /** Creates an enabled tenant; throws TenantExistsError when the id is taken. */
  create(tenant: { id: string; name: string }): Promise<Tenant>;
  get(id: string): Promise<Tenant | null>;
  /** Every tenant, ordered by id (byte order, the same in every adapter). */
  list(): Promise<Tenant[]>;
  /** Changes the fields given and returns the tenant; null when no such tenant exists. */
  update(id: string, change: { name?: string; disabled?: boolean }): Promise<Tenant | null>;
}

/** API keys. */
export interface ApiKeyRepository {
  /** Stores a new key; throws TenantNotFoundError when the tenant does not exist. */
  create(key: {
    id: string;
    tenantId: string;
    role: Role;
    secretHash: string;
    name?: string | null;
    expiresAt?: Date | null;
    limits?: Partial<ApiKeyLimits>;
  }): Promise<ApiKeyRecord>;
  /** The key whose secret hashes to `secretHash`, revoked or not. */
  findByHash(secretHash: string): Promise<ApiKeyRecord | null>;
  /** The tenant's key of that id, revoked or not; null when the tenant has no such key. */
  get(tenantId: string, id: string): Promise<ApiKeyRecord | null>;
  /** Marks the key revoked and returns it; null when no such key exists. Revoking twice keeps the first time. */
  revoke(id: string): Promise<ApiKeyRecord | null>;
  /** Sets the limits given (null clears one) and returns the key; null when no such key exists. */
  setLimits(id: string, change: Partial<ApiKeyLimits>): Promise<ApiKeyRecord | null>;
  /** The tenant's keys, revoked and expired ones included, oldest first. */
  listByTenant(tenantId: string): Promise<ApiKeyRecord[]>;
}

/** One message template of a prompt version; `content` holds `{{variable}}` placeholders. */
export interface PromptMessageTemplate {
  role: string;
  content: string;
}

/** An immutable version of a named prompt. */
export interface PromptVersion {
  tenantId: string;
  name: string;
  version: number;
  messages: PromptMessageTemplate[];
  /** Catalog alias the prompt runs on. */
  model: string;
  /** Chat parameters applied with it (temperature, max_tokens, …). */
  parameters: Record<string, unknown>;
  /** The placeholder names of `messages`, sorted, each once. */
  variables: string[];
  createdAt: Date;
  createdBy: string;
}

/** A prompt's versions and which one is active. */
export interface PromptHistory {
  name: string;
  activeVersion: number;
  versions: PromptVersion[];
}

/** One prompt of a tenant's list: its versions' numbers, and when its newest was created. */
export interface PromptSummary {
  name: string;
  activeVersion: number;
  latestVersion: number;
  updatedAt: Date;
}

/** Named prompts: versions are numbered 1, 2, … per tenant and name and never change. */
export interface PromptRepository {
  /**
   * Stores the next version (1 for a new name). The first version of a name becomes
   * active at once; later ones only when `activate` is true or by `activate()`.
   */
  createVersion(input: {
    tenantId: string;
    name: string;
    messages: PromptMessageTemplate[];
    model: string;
    parameters: Record<string, unknown>;
    variables: string[];
    createdBy: string;
    activate: boolean;
  }): Promise<PromptVersion>;
  /** Makes `version` the active one; throws PromptNotFoundError when the name or version does not exist. */
  activate(tenantId: string, name: string, version: number): Promise<PromptVersion>;
  /** The active version, or null when the tenant has no prompt of that name. */
  getActive(tenantId: string, name: string): Promise<PromptVersion | null>;
  /** Every version, newest first, with the active one; null when the name is unknown. */
  history(tenantId: string, name: string): Promise<PromptHistory | null>;
  /** The tenant's prompts that have a version, by name (byte order, the same in every adapter). */
  list(tenantId: string): Promise<PromptSummary[]>;
}

/** How a request ended, as far as usage is concerned. */
export type UsageStatus = 'succeeded' | 'failed' | 'cancelled';

/** One request that reached the stage of calling a provider. Never holds prompt or completion text. */
export interface UsageRecord {
  requestId: string;
  tenantId: string;
  keyId: string;
  feature: string | null;
  /**
   * What was asked: the kind of the request's job, one of the operations' (UsageKind of
   * src/operations/index.ts, which the stores' enum and CHECK constraint are held to by a test).
   */
  operation: string;
  /** The alias the client asked for (a model or a tier). */
  requestedModel: string;
  /** The catalog alias that answered (or was tried last). */
  model: string;
  provider: string;
  upstreamModel: string;
  promptName: string | null;
  promptVersion: number | null;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Prompt tokens read from the provider's cache (part of promptTokens). */
  cachedTokens: number;
  /** Prompt tokens written to the provider's cache (part of promptTokens). */
  cacheWriteTokens: number;
  /** Completion tokens the model spent reasoning (part of completionTokens). */
  reasoningTokens: number;
  usageSource: 'provider' | 'estimated';
  /** Integer micro-units of the tenant's currency. */
  costMicros: number;
  status: UsageStatus;
  errorCode: string | null;
  queueWaitMs: number;
  /** From enqueue to the first token; null when none was produced or the request was not streamed. */
  ttftMs: number | null;
  /** From enqueue to the end. */
  latencyMs: number;
  stream: boolean;
  piiFlags: string[];
  /** The Response object a Responses request made (`resp_…`); null for every other request. */
  responseId: string | null;
  /** The batch a line of which this request was (`batch_…`); null for a live request. */
  batchId: string | null;
  /** That line's `custom_id`; null for a live request. */
  customId: string | null;
  /** The deployment of `model` that answered (or was tried last): its catalog id, the alias for an alias of one target; null before any call. */
  deployment: string | null;
  /** Answered from the gateway's response cache (docs/decisions/response-cache.md): no upstream call, no worker. */
  cacheHit: boolean;
  /**
   * The digest of the request's Idempotency-Key (sha256, hex), when it sent one: the store's memory of a key answered,
   * which a Redis that came back empty cannot lose (docs/decisions/money.md). Absent: none.
   */
  idempotencyKey?: string | null;
  createdAt: Date;
}

/** Filters of a usage query; `since` inclusive, `until` exclusive. */
export interface UsageFilter {
  tenantId: string;
  since: Date;
  until: Date;
  model?: string;
  feature?: string;
  keyId?: string;
}

/** Position after the last record of a page: newest first, ties broken by request id. */
export interface UsageCursor {
  createdAt: Date;
  requestId: string;
}

/** Sums over a group of usage records. */
export interface UsageGroup {
  /** The day (YYYY-MM-DD, UTC), model alias or feature (null when none) of the group. */
  key: string | null;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costMicros: number;
}

/** A figure of spend from the store: its micros, and the requests (of those asked about) it counts. */
export interface SpentMicros {
  micros: number;
  counted: string[];
}

/** Usage records; written idempotently by request id (the outbox may deliver twice). */
export interface UsageRepository {
  /** Inserts the records whose request id is new; returns how many were new. */
  insertMany(records: UsageRecord[]): Promise<number>;
  /** One page, newest first, at most `limit` records after `cursor`. */
  list(filter: UsageFilter, limit: number, cursor: UsageCursor | null): Promise<UsageRecord[]>;
  /** Sums per UTC day, model or feature, ordered by key. */
  sum(filter: UsageFilter, groupBy: 'day' | 'model' | 'feature'): Promise<UsageGroup[]>;
  /**
   * Total cost of the tenant's records in [since, until), of one feature or (null) of all, and which of the
   * requests `among` that total counts, read together (one statement): what a lost budget counter is rebuilt from.
   */
  spentMicros(tenantId: string, feature: string | null, since: Date, until: Date, among: readonly string[]): Promise<SpentMicros>;
  /**
   * The request that answered an Idempotency-Key (its digest) since `since`: a record of it that succeeded or was
   * charged; null when there is none.
   */
  answeredBy(tenantId: string, keyDigest: string, since: Date): Promise<string | null>;
  /** When each of the tenant's keys made its newest record; a key without one is absent. */
  lastUsed(tenantId: string, keyIds: readonly string[]): Promise<Map<string, Date>>;
}

/** An audit event before it is chained. */
export interface AuditEventInput {
  /** Unique id (`aud_<ulid>`), so a redelivered event is stored once. */
  id: string;
  tenantId: string;
  /** Who did it: a key id, `cli`, or `anonymous`. */
  actor: string;
  /** What was done, e.g. `key.created`, `prompt.activated`, `auth.denied`. */
  action: string;
  /** What it was done to, e.g. a key id or `prompt:welcome@3`. */
  target: string | null;
  outcome: 'success' | 'denied' | 'blocked' | 'flagged' | 'failure';
  requestId: string | null;
  details: Record<string, unknown>;
  createdAt: Date;
}

/** A stored audit event: numbered per tenant and chained to the previous one by hash. */
export interface AuditEvent extends AuditEventInput {
  seq: number;
  prevHash: string;
  hash: string;
}

/** Filters of an audit query; `since` inclusive, `until` exclusive. */
export interface AuditFilter {
  tenantId: string;
  since?: Date;
  until?: Date;
  action?: string;
  actor?: string;
}

/** The result of walking a tenant's chain. */
export type AuditVerification = { ok: true; events: number } | { ok: false; events: number; brokenAt: { id: string; seq: number }; reason: string };

/** The audit log: append-only and tamper-evident per tenant. */
export interface AuditRepository {
  /** Appends events in order, each chained to its tenant's last one; an id already stored is skipped. */
  append(events: AuditEventInput[]): Promise<AuditEvent[]>;
  /** One page, newest first (highest seq first), at most `limit` events with seq below `beforeSeq`. */
  list(filter: AuditFilter, limit: number, beforeSeq: number | null): Promise<AuditEvent[]>;
  /** Recomputes the tenant's chain and names the first event whose hash or link is wrong. */
  verify(tenantId: string): Promise<AuditVerification>;
}

/** The calendar windows a budget resets on (UTC). */
export type BudgetWindow = 'hour' | 'day' | 'month';

/** A spending limit of a tenant, or of one feature of a tenant, per window. */
export interface BudgetPolicy {
  id: string;
  tenantId: string;
  /** Null: every request of the tenant counts; otherwise only requests of this feature. */
  feature: string | null;
  window: BudgetWindow;
  /** Integer micro-units of the tenant's currency. */
  limitMicros: number;
  createdAt: Date;
}

/** A prepaid amount added to a tenant's credit account. */
export interface CreditTopUp {
  id: string;
  tenantId: string;
  amountMicros: number;
  actor: string;
  createdAt: Date;
}

/** A tenant's rate limits; a null field falls back to the configured default. */
export interface TenantPlan {
  tenantId: string;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  keyRequestsPerMinute: number | null;
  keyTokensPerMinute: number | null;
  /** Requests of the tenant queued or running at once before new ones get 429. */
  maxQueued: number | null;
  /** What each answer served by the response cache costs the tenant (micro-units); null: nothing. */
  cacheHitPriceMicros: number | null;
}

/** Budget policies, credit top-ups and plans. */
export interface BudgetRepository {
  createPolicy(input: { id: string; tenantId: string; feature: string | null; window: BudgetWindow; limitMicros: number }): Promise<BudgetPolicy>;
  /** False when the tenant has no such policy. */
  deletePolicy(tenantId: string, id: string): Promise<boolean>;
  /** Oldest first. */
  listPolicies(tenantId: string): Promise<BudgetPolicy[]>;
  /** Adds to the credit account (created by the first top-up); a repeated id is stored once. */
  topUp(input: { id: string; tenantId: string; amountMicros: number; actor: string }): Promise<CreditTopUp>;
  /** The sum of all top-ups, or null when the tenant has no credit account (credits are then not enforced). */
  creditToppedUp(tenantId: string): Promise<number | null>;
  getPlan(tenantId: string): Promise<TenantPlan | null>;
  setPlan(plan: TenantPlan): Promise<TenantPlan>;
}

/** What a tenant's PII policy does with findings in its critical categories. */
export type PiiMode = 'block' | 'mask' | 'flag' | 'off';

/** A tenant's PII policy. */
export interface PiiPolicy {
  tenantId: string;
  mode: PiiMode;
  /** The categories the policy acts on; findings of other categories pass unchanged and unrecorded. */
  critical: string[];
}

/** Per-tenant policies other than budgets. */
export interface PolicyRepository {
  /** Null when the tenant has set none (the configured default applies). */
  getPii(tenantId: string): Promise<PiiPolicy | null>;
  /** Creates or replaces the tenant's PII policy. */
  setPii(policy: PiiPolicy): Promise<PiiPolicy>;
  /** Null when the tenant has set none (responses stored, 30 days). */
  getData(tenantId: string): Promise<DataPolicy | null>;
  /** Creates or replaces the tenant's data policy. */
  setData(policy: Omit<DataPolicy, 'updatedAt'>): Promise<DataPolicy>;
  /** Null when the tenant has set none (its responses are not cached). */
  getCache(tenantId: string): Promise<CachePolicy | null>;
  /** Creates or replaces the tenant's response cache policy. */
  setCache(policy: Omit<CachePolicy, 'updatedAt'>): Promise<CachePolicy>;
}

/** A tenant's response cache policy: whether answers are cached, for how long by default, and how many bytes at most. */
export interface CachePolicy {
  tenantId: string;
  enabled: boolean;
  /** A stored answer's lifetime when the request's Cache-Control names none. */
  defaultTtlS: number;
  /** The most the tenant's cached answers may take in Redis; the oldest are evicted beyond it. */
  maxBytes: number;
  updatedAt: Date;
}

/** A tenant's data policy: whether its responses are stored, and for how long. */
export interface DataPolicy {
  tenantId: string;
  /** False: `store: true` is ignored, as OpenAI's zero-retention projects do. */
  storeResponses: boolean;
  /** Stored responses older than this many days are removed by the sweep. */
  retentionDays: number;
  updatedAt: Date;
}

/** Where a response stands; the last four are final. */
export const RESPONSE_STATUSES = ['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete'] as const;
/** A response's status, as the Responses API names it. */
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];

/** One item of a stored response (of its input or its output), as the Responses API shows it: every one has an id. */
export type StoredItem = Record<string, unknown> & { id: string };

/** A response as stored: its Response object, its own input items and the response it continued. */
export interface StoredResponse {
  /** `resp_…`. */
  id: string;
  tenantId: string;
  status: ResponseStatus;
  background: boolean;
  /** The Response object as GET /v1/responses/{id} returns it; its `output` items are findable by id too. */
  response: Record<string, unknown>;
  /** The items of this request's own `input` (masked as the PII policy masks), in order; an earlier response's stay with it. */
  input: StoredItem[];
  previousResponseId: string | null;
  createdAt: Date;
  /** When it goes whatever the tenant's retention (a background response kept only for polling); null: the retention applies. */
  expiresAt: Date | null;
}

/** One page of a response's input items. */
export interface StoredItemPage {
  items: StoredItem[];
  hasMore: boolean;
}

/** A background response not final yet, as the reaper pages through them. */
export interface UnfinishedResponse {
  tenantId: string;
  id: string;
  createdAt: Date;
}

/** Stored responses, per tenant. */
export interface ResponseRepository {
  /**
   * Records responses by id: the first final one (completed, failed, cancelled, incomplete) stays,
   * so that a response never seen failed is later seen completed; one not final replaces only one
   * not final (a late `queued` never hides an answer); an id that was deleted is never recorded again.
   */
  put(records: StoredResponse[]): Promise<void>;
  /** The tenant's response; null when it has none of that id (another tenant's included) or it was deleted. */
  get(tenantId: string, id: string): Promise<StoredResponse | null>;
  /**
   * Removes the response and its items for good, keeping only its id so that no late write brings
   * it back; false when there was none. With `known` (Redis holds the response, and the outbox may
   * not have carried it here yet), the id is kept so even when the store has no row of it.
   */
  delete(tenantId: string, id: string, known?: boolean): Promise<boolean>;
  /** A page of the response's input items in `order` of their position, after the item of id `after`; null when there is no such response. */
  listInput(tenantId: string, id: string, page: { after: string | null; limit: number; order: 'asc' | 'desc' }): Promise<StoredItemPage | null>;
  /** The tenant's items of these ids, input or output of any of its stored responses. */
  findItems(tenantId: string, ids: readonly string[]): Promise<Map<string, StoredItem>>;
  /** Background responses not final that were created before `before`, oldest first, after `after` (a row this returned): what the reaper looks at. */
  listUnfinished(before: Date, limit: number, after?: UnfinishedResponse | null): Promise<UnfinishedResponse[]>;
  /**
   * Removes responses past their `expiresAt` or their tenant's retention (its data policy; 30
   * days without one), and the ids kept of deleted ones once that old; at most `limit` of each. Returns how many responses went.
   */
  sweep(now: Date, limit: number): Promise<number>;
}

/** A tenant's webhook endpoint, with its secrets, stored as they are: they sign every delivery. */
export interface WebhookEndpoint {
  /** `wh_<ulid>`. */
  id: string;
  tenantId: string;
  url: string;
  /** The event types it is sent (WEBHOOK_EVENT_TYPES of src/domain/webhooks/webhook-event.ts). */
  events: WebhookEventType[];
  /** False: nothing is sent to it (an admin turned it off, or it answered 410 Gone). */
  enabled: boolean;
  /** `whsec_…`: signs every delivery. */
  secret: string;
  /** The secret before the last rotation, which signs deliveries too until `previousSecretExpiresAt`. */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One attempt to deliver one event to one endpoint. */
export interface WebhookDelivery {
  /** `whd_<ulid>`. */
  id: string;
  tenantId: string;
  webhookId: string;
  /** The event as sent (its id is the `webhook-id` of every attempt). */
  event: WebhookEvent;
  /** 1 for the first attempt of the event to this endpoint; a retry or a resend counts on. */
  attempt: number;
  /** `succeeded`: the endpoint answered 2xx. */
  status: 'succeeded' | 'failed';
  /** Null when no answer came (refused connection, timeout, blocked address). */
  httpStatus: number | null;
  latencyMs: number;
  /** Why it failed; null when it succeeded. */
  error: string | null;
  createdAt: Date;
}

/** Webhook endpoints and the record of their deliveries, per tenant. */
export interface WebhookRepository {
  /** Stores a new, enabled endpoint. */
  create(endpoint: { id: string; tenantId: string; url: string; events: WebhookEventType[]; secret: string }): Promise<WebhookEndpoint>;
  /** The tenant's endpoint; null when it has none of that id (another tenant's included). */
  get(tenantId: string, id: string): Promise<WebhookEndpoint | null>;
  /** The tenant's endpoints, oldest first. */
  list(tenantId: string): Promise<WebhookEndpoint[]>;
  /** The tenant's enabled endpoints subscribed to `eventType`. */
  listSubscribed(tenantId: string, eventType: WebhookEventType): Promise<WebhookEndpoint[]>;
  /** Changes the fields given; null when the tenant has no such endpoint. */
  update(tenantId: string, id: string, change: { url?: string; events?: WebhookEventType[]; enabled?: boolean }): Promise<WebhookEndpoint | null>;
  /** Makes `secret` the current one and the current one the previous, valid until `previousExpiresAt`; null when there is no such endpoint. */
  rotateSecret(tenantId: string, id: string, secret: string, previousExpiresAt: Date): Promise<WebhookEndpoint | null>;
  /** Removes the endpoint and its deliveries; false when there was none. */
  delete(tenantId: string, id: string): Promise<boolean>;
  /** Records an attempt once per id; nothing when its endpoint is gone (deleted meanwhile). */
  recordDelivery(delivery: WebhookDelivery): Promise<void>;
  /** The endpoint's attempts, newest first, at most `limit` after the attempt of id `after`. */
  listDeliveries(tenantId: string, webhookId: string, page: { limit: number; after: string | null }): Promise<WebhookDelivery[]>;
  /** One attempt of the tenant's endpoint; null when there is none of that id. */
  getDelivery(tenantId: string, webhookId: string, id: string): Promise<WebhookDelivery | null>;
  /** The highest attempt number recorded for the event at the endpoint; 0 when none. */
  lastAttempt(tenantId: string, webhookId: string, eventId: string): Promise<number>;
}

/** Why a file was uploaded, as OpenAI's Files API names it; `batch_output` files are the gateway's own. */
export const FILE_PURPOSES = ['assistants', 'batch', 'batch_output', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
/** A file's purpose. */
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** A stored file's description; its bytes are read apart, a chunk at a time. */
export interface StoredFile {
  /** `file-<ulid>`. */
  id: string;
  tenantId: string;
  purpose: FilePurpose;
  filename: string;
  bytes: number;
  /** Its lines (a last line without a newline counts; an empty file has none). */
  lines: number;
  createdAt: Date;
  /** When the sweep removes it; null: never. */
  expiresAt: Date | null;
}

/** One page of a tenant's files. */
export interface FilePage {
  files: StoredFile[];
  hasMore: boolean;
}

/** Files per tenant. Their bytes move in chunks: no adapter ever holds a whole file in memory. */
export interface FileRepository {
  /**
   * Stores a file from `content` (pieces of any size), counting its bytes and lines as they pass;
   * it is visible only once all of it is stored. When `content` throws (a limit passed, the client
   * gone), nothing of it stays and the error is rethrown. An id already stored is left as it is
   * and its record returned, so a re-run that writes the same file writes it once. `file.purpose`
   * and `file.expiresAt` are read once `content` has ended: a caller may settle them while it
   * streams (a multipart form's fields that follow its file).
   */
  create(file: Omit<StoredFile, 'bytes' | 'lines'>, content: AsyncIterable<Uint8Array>): Promise<StoredFile>;
  /** The tenant's file; null when it has none of that id (another tenant's included) or it expired. */
  get(tenantId: string, id: string): Promise<StoredFile | null>;
  /** A page of the tenant's files of `purpose` (any when absent) in `order` of creation, after the file of id `after`. */
  list(tenantId: string, page: { purpose?: FilePurpose; after: string | null; limit: number; order: 'asc' | 'desc' }): Promise<FilePage>;
  /**
   * The file's bytes from byte `offset` (0 when absent) to byte `end` (exclusive; the file's end
   * when absent), a chunk at a time; nothing when the tenant has no such file. An expired file
   * the sweep has kept (a running batch's input) is read too: its batch must see every line;
   * clients see only what `get` finds.
   */
  read(tenantId: string, id: string, offset?: number, end?: number): AsyncIterable<Uint8Array>;
  /** Removes the file and its bytes; false when there was none. */
  delete(tenantId: string, id: string): Promise<boolean>;
  /** Removes files past their `expiresAt`, but for the input of a batch not ended, at most `limit`; returns how many went. */
  sweep(now: Date, limit: number): Promise<number>;
}

/** Where a batch stands, as OpenAI's Batch API names it; `failed`, `completed`, `expired` and `cancelled` are final. */
export const BATCH_STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;
/** A batch's status. */
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** Whose API made the batch: its objects and results are shown in that API's shapes. */
export type BatchDialect = 'openai' | 'anthropic';

/** Why a batch failed validation, one entry per offending line. */
export interface BatchError {
  code: string;
  message: string;
  param: string | null;
  /** 1-based, as OpenAI counts them; null for an error of the whole file. */
  line: number | null;
}

/** Tokens summed over a batch's lines, in OpenAI's terms. */
export interface BatchUsage {
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  totalTokens: number;
}

/** A run of consecutive lines of the input file, run by one job of the batch lane. */
export interface BatchSegment {
  /** 0-based index of its first line. */
  firstLine: number;
  lines: number;
  /** Byte offset of its first line in the input file. */
  offset: number;
}

/** A batch as stored. */
export interface StoredBatch {
  /** `batch_<ulid>`, or `msgbatch_<ulid>` for Anthropic's. */
  id: string;
  tenantId: string;
  /** The API key that created it: its lines are admitted as that key's requests. */
  keyId: string;
  dialect: BatchDialect;
  /** The route every line goes to (`/v1/chat/completions`, `/v1/embeddings`, `/v1/responses`, `/v1/messages`). */
  endpoint: string;
  inputFileId: string;
  completionWindow: string;
  status: BatchStatus;
  metadata: Record<string, string> | null;
  /** The `X-Feature` of the create request, which its lines' usage records carry. */
  feature: string | null;
  /** Validation's findings (a failed batch's reasons). */
  errors: BatchError[];
  /** Lines of the input, known once validated (0 before). */
  total: number;
  /** How the validated input is cut for the lane; empty before validation. */
  segments: BatchSegment[];
  outputFileId: string | null;
  errorFileId: string | null;
  /** Summed over its lines when it ended; null before (a running batch's are summed from its results). */
  usage: BatchUsage | null;
  createdAt: Date;
  /** When its completion window ends. */
  expiresAt: Date;
  inProgressAt: Date | null;
  finalizingAt: Date | null;
  completedAt: Date | null;
  failedAt: Date | null;
  expiredAt: Date | null;
  cancellingAt: Date | null;
  cancelledAt: Date | null;
}

/** The result of one line that ran (admitted, or refused by admission): one per line, the first written stays. */
export interface BatchLineResult {
  tenantId: string;
  batchId: string;
  /** 0-based index of the line in the input file. */
  line: number;
  customId: string;
  /** The line's request id (`batch_req_…`), which its usage record carries too. */
  requestId: string;
  /** `succeeded`: the endpoint answered 2xx. */
  status: 'succeeded' | 'failed';
  /** The HTTP status a live request would have had. */
  statusCode: number;
  /** The answer's JSON body as the endpoint returns it (a failure's is its error envelope). */
  body: string;
  usage: BatchUsage;
}

/** How many of a batch's lines have a result, and their usage summed. */
export interface BatchProgress {
  succeeded: number;
  failed: number;
  /** Of the failed, the lines that never ran (status code 0: the batch expired or was cancelled first); the adapters always count them. */
  neverRan?: number;
  usage: BatchUsage;
}

/** Batches and their lines' results, per tenant. */
export interface BatchRepository {
  create(batch: StoredBatch): Promise<void>;
  /** The tenant's batch; null when it has none of that id (another tenant's included). */
  get(tenantId: string, id: string): Promise<StoredBatch | null>;
  /**
   * The tenant's batches of `dialect`, newest first, at most `limit` after the batch of id `after`,
   * or, with `before`, the `limit` newer than the batch of that id (`hasMore`: still newer ones).
   */
  list(
    tenantId: string,
    page: { dialect: BatchDialect; after: string | null; before?: string | null; limit: number },
  ): Promise<{ batches: StoredBatch[]; hasMore: boolean }>;
  /**
   * Applies `change` only while the batch's status is one of `from` (so that of two processes
   * moving it on, one does); returns the batch as changed, null when it was not.
   */
  transition(tenantId: string, id: string, from: readonly BatchStatus[], change: Partial<Omit<StoredBatch, 'id' | 'tenantId'>>): Promise<StoredBatch | null>;
  /** Batches of every tenant not final (validating, in progress, finalizing, cancelling), oldest first, after the batch of id `after`: what the supervisor looks at. */
  listActive(limit: number, after: string | null): Promise<StoredBatch[]>;
  /** Whether a batch of the tenant not ended reads the file: it may be neither deleted nor swept until then. */
  readsFile(tenantId: string, fileId: string): Promise<boolean>;
  /** Removes a batch and its results; false when there was none. */
  delete(tenantId: string, id: string): Promise<boolean>;
  /** Records results; a line that has one keeps it (a re-run line, the outbox's redelivery). */
  insertResults(results: BatchLineResult[]): Promise<void>;
  /** The lines in [from, to) that have a result, ascending. */
  doneLines(tenantId: string, batchId: string, from: number, to: number): Promise<number[]>;
  /** Results in order of line, at most `limit` after line `afterLine` (-1: from the first). */
  readResults(tenantId: string, batchId: string, afterLine: number, limit: number): Promise<BatchLineResult[]>;
  progress(tenantId: string, batchId: string): Promise<BatchProgress>;
}

/** The whole store, as built once per process by src/infra/store/create-store.ts. */
export interface Repository {
  readonly kind: 'postgres' | 'mongodb';
  readonly tenants: TenantRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly prompts: PromptRepository;
  readonly usage: UsageRepository;
  readonly audit: AuditRepository;
  readonly budgets: BudgetRepository;
  readonly policies: PolicyRepository;
  readonly responses: ResponseRepository;
  readonly webhooks: WebhookRepository;
  readonly files: FileRepository;
  readonly batches: BatchRepository;
  /** Creates tables/collections and indexes; idempotent (run by `release`). */
  migrate(): Promise<void>;
  /** Cheap liveness probe for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by TenantRepository.create for a duplicate id. */
export class TenantExistsError extends Error {
  readonly tenantId: string;
  constructor(tenantId: string) {
    super(`Tenant '${tenantId}' already exists.`);
    this.tenantId = tenantId;
    this.name = 'TenantExistsError';
  }
}

/** Thrown by ApiKeyRepository.create for an unknown tenant. */
export class TenantNotFoundError extends Error {
  readonly tenantId: string;
  constructor(tenantId: string) {
    super(`Tenant '${tenantId}' does not exist.`);
    this.tenantId = tenantId;
    this.name = 'TenantNotFoundError';
  }
}

/** Thrown when a prompt name or version does not exist for the tenant. */
export class PromptNotFoundError extends Error {
  readonly promptName: string;
  constructor(name: string, version?: number) {
    super(version === undefined ? `Prompt '${name}' does not exist.` : `Prompt '${name}' has no version ${version}.`);
    this.name = 'PromptNotFoundError';
    this.promptName = name;
  }
}
