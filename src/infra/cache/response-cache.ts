/**
 * The response cache in Redis: one string per answer in its tenant's slot, and the tenant's
 * bookkeeping that keeps it under its cap (cache-store-4.lua). An answer is "<stored at ms>:"
 * then JSON, gzipped (and base64'd, as the scripts speak text) above COMPRESS_ABOVE bytes: the
 * admission script reads the time to decide a hit, and the web decodes only a hit.
 */
import { gunzipSync, gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { RedisKeys } from '../redis/keys.ts';
import type { ScriptedRedis } from '../redis/scripts.ts';
import type { Usage } from '../../wire/openai-chat.ts';

const gzipAsync = promisify(gzip);

/** What is kept of one successful answer, the same whether it was streamed or not. */
export interface KeptCacheAnswer {
  /** The catalog alias that answered. */
  model: string;
  usage: Usage;
  /** The operation's own form of the answer. */
  answer: unknown;
}

/** A kept answer as read back from the cache, with when it was stored and the deployment that made it. */
export interface CachedAnswer extends KeptCacheAnswer {
  storedAt: number;
  deployment: string | null;
}

/** Answers longer than this are stored gzipped: chat JSON shrinks 3-5 times, and below it the saving is not worth the CPU. */
export const COMPRESS_ABOVE = 1024;

// JSON text starts with '{'; a compressed entry with this mark.
const GZIPPED = 'z';

/** An answer as stored. */
export async function encodeCachedAnswer(answer: CachedAnswer): Promise<string> {
  const { storedAt, ...kept } = answer;
  const json = JSON.stringify(kept);
  const body = json.length <= COMPRESS_ABOVE ? json : GZIPPED + (await gzipAsync(json)).toString('base64');
  return `${storedAt}:${body}`;
}

/** An answer as read back. */
export function decodeCachedAnswer(text: string): CachedAnswer {
  const colon = text.indexOf(':');
  const body = text.slice(colon + 1);
  const json = body.startsWith(GZIPPED) ? gunzipSync(Buffer.from(body.slice(GZIPPED.length), 'base64')).toString('utf8') : body;
  return { ...(JSON.parse(json) as Omit<CachedAnswer, 'storedAt'>), storedAt: Number(text.slice(0, colon)) };
}

/** What storing did: whether the answer fits under the cap, the bytes held after, and how many older answers made room. */
export interface CacheStoreOutcome {
  stored: boolean;
  totalBytes: number;
  evicted: number;
}

/** Stores an encoded answer for `ttlMs`, evicting the tenant's oldest to stay under `maxBytes` (one script call). */
export async function storeAnswer(
  redis: ScriptedRedis,
  keys: RedisKeys,
  entry: { tenantId: string; digest: string; value: string; ttlMs: number; maxBytes: number; nowMs?: number },
): Promise<CacheStoreOutcome> {
  const { tenantId, digest } = entry;
  const index = keys.cacheIndex(tenantId);
  const prefix = keys.cacheEntry(tenantId, '');
  const reply = (await redis.cacheStore(
    keys.cacheEntry(tenantId, digest),
    index.byAge,
    index.byExpiry,
    index.sizes,
    entry.nowMs ?? Date.now(),
    Math.max(1, Math.floor(entry.ttlMs)),
    entry.maxBytes,
    prefix,
    digest,
    entry.value,
  )) as [number, number, number];
  return { stored: reply[0] === 1, totalBytes: reply[1], evicted: reply[2] };
}
