import type { RedisKeys } from '../../infra/redis/keys.ts';
import { admit, type RatePart, type RateReply, type ScriptedRedis } from '../../infra/redis/scripts.ts';

/** Allowances per minute of an API key or of a tenant. */
export interface RateLimits {
  requestsPerMinute: number;
  tokensPerMinute: number;
}

/** Values of the x-ratelimit-* headers: per dimension, those of the tighter of key and tenant. */
export interface RateHeaders {
  limitRequests: number;
  remainingRequests: number;
  resetRequestsMs: number;
  limitTokens: number;
  remainingTokens: number;
  resetTokensMs: number;
}

/** Who is limited: one API key or its whole tenant. */
export type RateScope = 'key' | 'tenant';

/** What is limited: requests or tokens per minute. */
export type RateDimension = 'requests' | 'tokens';

/** The outcome of a check: admitted (and charged), or refused (nothing charged) with the seconds to wait. */
export type RateDecision =
  { ok: true; headers: RateHeaders } | { ok: false; scope: RateScope; dimension: RateDimension; retryAfterSeconds: number; headers: RateHeaders };

/** One check: the request's token estimate and the limits of its tenant and key. */
export interface RateCheck {
  tenantId: string;
  keyId: string;
  tokens: number;
  tenant: RateLimits;
  key: RateLimits;
}

/** One bucket's state after a check, as the script reports it. */
interface BucketState {
  scope: RateScope;
  dimension: RateDimension;
  limit: number;
  remaining: number;
  resetMs: number;
  /** ms until it would admit: 0 now, -1 never. */
  waitMs: number;
}

const WINDOW_MS = 60_000;
// A request larger than a whole minute's allowance can never pass; a minute is the honest wait.
const NEVER_RETRY_AFTER_SECONDS = 60;

// Order of the buckets in admit-n.lua's rate part.
const BUCKETS: ReadonlyArray<{ scope: RateScope; dimension: RateDimension }> = [
  { scope: 'key', dimension: 'requests' },
  { scope: 'key', dimension: 'tokens' },
  { scope: 'tenant', dimension: 'requests' },
  { scope: 'tenant', dimension: 'tokens' },
];

/** Requests and tokens per minute, per API key and per tenant, checked and charged together in Redis (GCRA). */
export class RateLimiter {
  readonly #redis: ScriptedRedis;
  readonly #keys: RedisKeys;
  readonly #now: () => number;

  constructor(options: { redis: ScriptedRedis; keys: RedisKeys; now?: () => number }) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#now = options.now ?? Date.now;
  }

  /** Admits and charges the request in all four buckets, or refuses it and charges none. */
  async check(input: RateCheck): Promise<RateDecision> {
    const reply = await admit(this.#redis, { nowMs: Math.floor(this.#now()), rate: this.part(input) });
    if (!reply.rate) throw new Error('the admission script did not reach the rate limits');
    return this.decide(input, reply.rate);
  }

  /** The check as the rate part of an admission script call (with the idempotency claim and the budget). */
  part(input: RateCheck): RatePart {
    const tokens = Math.ceil(input.tokens);
    if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`invalid token estimate: ${input.tokens}`);
    return {
      hash: this.#keys.rate(input.tenantId),
      keyField: `k:${input.keyId}`,
      windowMs: WINDOW_MS,
      limits: BUCKETS.map(({ scope, dimension }) => limitOf(input[scope], dimension)),
      costs: BUCKETS.map(({ dimension }) => (dimension === 'requests' ? 1 : tokens)),
    };
  }

  /** The decision the rate part's reply stands for. */
  decide(input: RateCheck, reply: RateReply): RateDecision {
    const states = BUCKETS.map((bucket, i) => ({
      ...bucket,
      limit: limitOf(input[bucket.scope], bucket.dimension),
      remaining: Math.max(0, reply[1 + 3 * i] ?? 0),
      resetMs: reply[2 + 3 * i] ?? 0,
      waitMs: reply[3 + 3 * i] ?? 0,
    }));
    const headers = headersOf(states);
    if (reply[0] === 1) return { ok: true, headers };
    return { ok: false, ...refusal(states), headers };
  }
}

function limitOf(limits: RateLimits, dimension: RateDimension): number {
  const limit = dimension === 'requests' ? limits.requestsPerMinute : limits.tokensPerMinute;
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`invalid ${dimension} per minute limit: ${limit}`);
  return limit;
}

/** The bucket that decides the wait: one that can never admit, else the one that needs longest. */
function refusal(states: readonly BucketState[]): { scope: RateScope; dimension: RateDimension; retryAfterSeconds: number } {
  const never = states.filter((state) => state.waitMs < 0).sort((a, b) => a.limit - b.limit)[0];
  if (never) return { scope: never.scope, dimension: never.dimension, retryAfterSeconds: NEVER_RETRY_AFTER_SECONDS };
  const longest = states.reduce((worst, state) => (state.waitMs > worst.waitMs ? state : worst));
  return { scope: longest.scope, dimension: longest.dimension, retryAfterSeconds: Math.max(1, Math.ceil(longest.waitMs / 1000)) };
}

function headersOf(states: readonly BucketState[]): RateHeaders {
  const requests = tighter(states, 'requests');
  const tokens = tighter(states, 'tokens');
  return {
    limitRequests: requests.limit,
    remainingRequests: requests.remaining,
    resetRequestsMs: requests.resetMs,
    limitTokens: tokens.limit,
    remainingTokens: tokens.remaining,
    resetTokensMs: tokens.resetMs,
  };
}

/** Of key and tenant, the bucket with less room left (then the smaller limit). */
function tighter(states: readonly BucketState[], dimension: RateDimension): BucketState {
  const [first, second] = states.filter((state) => state.dimension === dimension);
  if (!first || !second) throw new Error(`missing ${dimension} buckets`);
  if (second.remaining !== first.remaining) return second.remaining < first.remaining ? second : first;
  return second.limit < first.limit ? second : first;
}

/** The x-ratelimit-* headers as OpenAI sends them (reset as e.g. "1s", "6m0s", "20ms"). */
export function rateLimitHeaders(headers: RateHeaders): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(headers.limitRequests),
    'x-ratelimit-limit-tokens': String(headers.limitTokens),
    'x-ratelimit-remaining-requests': String(headers.remainingRequests),
    'x-ratelimit-remaining-tokens': String(headers.remainingTokens),
    'x-ratelimit-reset-requests': formatDuration(headers.resetRequestsMs),
    'x-ratelimit-reset-tokens': formatDuration(headers.resetTokensMs),
  };
}

/** A duration as Go prints it, to the millisecond: "0s", "20ms", "1.5s", "6m0s", "1h2m3s". */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = `${(total % 60_000) / 1000}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${minutes}m${seconds}`;
  return seconds;
}
