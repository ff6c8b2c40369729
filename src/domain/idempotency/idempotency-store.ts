import { createHash } from 'node:crypto';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import { admit, type ClaimPart, type ClaimReply, type ScriptedRedis } from '../../infra/redis/scripts.ts';

/** The spec's lifetime of an idempotency key: afterwards the same key is a new request. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** What a claim found: the key is now ours, or held by an earlier request (finished or running), or reused for another body. */
export type ClaimResult =
  /** `forgetful`: the tenant's claims were kept for less than a key lives, so Redis may have lost an earlier one of this key. */
  { status: 'claimed'; forgetful: boolean } | { status: 'completed'; requestId: string } | { status: 'in_flight'; requestId: string } | { status: 'mismatch' };

/** Idempotency keys of the spec (Errors, Idempotency): scoped to the tenant, kept for the TTL from the claim. */
export class IdempotencyStore {
  readonly #redis: ScriptedRedis;
  readonly #keys: RedisKeys;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: { redis: ScriptedRedis; keys: RedisKeys; ttlMs: number; now?: () => number }) {
    if (!Number.isSafeInteger(options.ttlMs) || options.ttlMs <= 0) throw new RangeError(`invalid idempotency TTL: ${options.ttlMs}`);
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
  }

  /** How long a key lives from its claim. */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** Claims `key` for `requestId`; `fingerprint`: a hash of the canonical request (the caller computes it). */
  async claim(tenantId: string, key: string, fingerprint: string, requestId: string): Promise<ClaimResult> {
    const reply = await admit(this.#redis, { nowMs: Math.floor(this.#now()), claim: this.part(tenantId, key, fingerprint, requestId) });
    if (!reply.claim) throw new Error('the admission script did not reach the claim');
    return claimResult(reply.claim);
  }

  /** The claim as the idempotency part of an admission script call (with the rate limits and the budget). */
  part(tenantId: string, key: string, fingerprint: string, requestId: string): ClaimPart {
    return { key: this.keyFor(tenantId, key), since: this.#keys.idempotencySince(tenantId), fingerprint, requestId, ttlMs: this.#ttlMs };
  }

  /** The owner finished: later claims replay it. Only the owner (requestId) can complete. */
  complete(tenantId: string, key: string, requestId: string): Promise<boolean> {
    return completeClaim(this.#redis, this.keyFor(tenantId, key), requestId);
  }

  /** The owner failed without being charged: the key is free again. Only the owner can release. */
  release(tenantId: string, key: string, requestId: string): Promise<boolean> {
    return releaseClaim(this.#redis, this.keyFor(tenantId, key), requestId);
  }

  /** The Redis key of a claim (the worker completes/releases it by name; it goes in the job data). */
  keyFor(tenantId: string, key: string): string {
    // The client's key may be any 255 characters: hashing keeps the Redis key short and free of ':' and '{'.
    return this.#keys.idempotency(tenantId, keyDigest(key));
  }
}

/** The digest of the client's key in a claim's Redis key (its last segment), as a usage record keeps it. */
export function claimDigest(claimKey: string): string {
  return claimKey.slice(claimKey.lastIndexOf(':') + 1);
}

/** The digest of a client's Idempotency-Key: what its claim and its usage record are named by. */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** What a claim part's reply means. */
export function claimResult(reply: ClaimReply): ClaimResult {
  const [status, heldBy] = reply;
  if (status === 'claimed') return { status, forgetful: heldBy === 1 };
  if (status === 'mismatch') return { status };
  if ((status === 'completed' || status === 'in_flight') && heldBy !== undefined) return { status, requestId: heldBy };
  throw new Error(`unexpected idempotency claim reply: ${status}`);
}

/** Marks the claim completed if `requestId` owns it (worker side: needs only the claim's Redis key). */
export async function completeClaim(redis: ScriptedRedis, claimKey: string, requestId: string): Promise<boolean> {
  return (await redis.idempotencyComplete(claimKey, requestId)) === 1;
}

/** Frees the claim if `requestId` owns it and it is still in flight (worker side). */
export async function releaseClaim(redis: ScriptedRedis, claimKey: string, requestId: string): Promise<boolean> {
  return (await redis.idempotencyRelease(claimKey, requestId)) === 1;
}

/** A stable fingerprint of a JSON body: SHA-256 of its canonical form (keys sorted recursively). */
export function requestFingerprint(body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(body) ?? 'null')
    .digest('hex');
}

/** JSON with object keys sorted at every depth; undefined where JSON.stringify would omit the value. */
function canonicalJson(value: unknown): string | undefined {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item) ?? 'null').join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const fields: string[] = [];
    for (const name of Object.keys(value).sort()) {
      const field = canonicalJson((value as Record<string, unknown>)[name]);
      if (field !== undefined) fields.push(`${JSON.stringify(name)}:${field}`);
    }
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value);
}
