/**
 * The response cache's step on the web tier: what the request asks of it (Cache-Control and the
 * tenant's policy), the look-up admission makes in its own script call, and a hit served from
 * Redis without a job: recorded at no cost, replayed as its worker's events would be.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Operation } from '../../operations/operation.ts';
import type { TenantSettings } from '../../domain/tenants/tenant-settings.ts';
import { BYPASS, planCaching, readCacheControl, type CachePlan, type CacheStatus } from '../../domain/cache/cache-directives.ts';
import { cacheDigest } from '../../domain/cache/cache-key.ts';
import { hitRecord, type HitRequest } from '../../domain/cache/hit-record.ts';
import { decodeCachedAnswer, type CachedAnswer } from '../../infra/cache/response-cache.ts';
import type { AdmissionDecision, AdmissionRequest } from '../../domain/admission/admission.ts';
import type { UsageRecord } from '../../infra/store/repository.ts';
import type { CatalogModel } from '../../domain/catalog/schema.ts';
import { EventQueue, type Dispatch } from '../../infra/events/event-queue.ts';
import type { JobCommon } from '../../infra/queue/job.ts';

/** What the cache step needs, built once by the composition root. */
export interface CachePorts {
  /** Queues a hit's usage record for the store. */
  record(record: UsageRecord): Promise<void>;
  /** The catalog's models, for the provider a hit's record names. */
  models: Readonly<Record<string, CatalogModel>>;
  /** Counts look-ups and keeps the tenant's stored bytes; null when the process keeps no metrics. */
  observe: ((tenantId: string, status: CacheStatus, totalBytes: number | null) => void) | null;
}

/** The cache's part in one request, with the digest of its answer when the cache reads or stores it. */
export interface RequestCaching {
  plan: CachePlan;
  digest: string | null;
}

/** Decides the cache's part from the request's Cache-Control, the tenant's policy and the operation; sets `x-cache`. */
export function planRequestCaching(
  operation: Operation,
  request: FastifyRequest,
  reply: FastifyReply,
  facts: { settings: TenantSettings; payload: object; candidates: string[]; idempotent: boolean; detached: boolean },
): RequestCaching {
  const cache = operation.cache;
  // A tenant without caching (most) pays no look at the request's body or headers.
  const cacheable = cache !== undefined && !facts.detached && facts.settings.cache.enabled;
  if (!cacheable) {
    reply.header('x-cache', BYPASS.status);
    return { plan: BYPASS, digest: null };
  }
  const directives = readCacheControl(request.headers['cache-control']);
  const samples = cache.samples(facts.payload as never);
  const plan = planCaching(facts.settings.cache, directives, { cacheable, samples, idempotent: facts.idempotent });
  reply.header('x-cache', plan.status);
  const digest = plan === BYPASS ? null : cacheDigest(operation.name, facts.candidates, cache.request(facts.payload as never));
  return { plan, digest };
}

/** What admission reads of the cache for the request, and what a hit costs the tenant: null when the cache is not read. */
export function cacheRead(caching: RequestCaching, settings: TenantSettings): AdmissionRequest['cache'] {
  const { plan, digest } = caching;
  if (plan.readMaxAgeS === null || digest === null) return null;
  return { digest, maxAgeMs: plan.readMaxAgeS * 1000, priceMicros: hitPriceOf(settings) };
}

/** What a hit costs the tenant (micro-units): its plan's price, or nothing. */
export function hitPriceOf(settings: TenantSettings): number {
  return settings.plan?.cacheHitPriceMicros ?? 0;
}

/** Where a successful answer goes in the cache, for the job; undefined when it is not stored. */
export function cacheOrder(caching: RequestCaching, settings: TenantSettings): JobCommon['cache'] {
  const { plan, digest } = caching;
  if (plan.storeTtlS === null || digest === null) return undefined;
  return { digest, ttlMs: plan.storeTtlS * 1000, maxBytes: settings.cache.maxBytes };
}

/** A hit, as what the relay reads: its events, in order, already ended. */
function replayed(operation: Operation, cached: CachedAnswer, payload: object, job: { requestId: string; stream: boolean }): Dispatch {
  const events = new EventQueue();
  const replay = (operation.cache as NonNullable<Operation['cache']>).replay(cached, payload as never, job);
  replay.forEach((event, i) => events.push({ seq: i + 1, ...event, ...(i === 0 && cached.deployment !== null ? { deployment: cached.deployment } : {}) }));
  events.close();
  return { events, cancel: () => undefined };
}

/** The request as a hit's usage record and its replay read it. */
export interface HitContext {
  hit: Omit<HitRequest, 'receivedAt'>;
  payload: object;
}

/** Counts the request's part in the cache: what admission found, or (a refused request, or one that read nothing) its plan's status. */
export function observeCaching(
  ports: CachePorts,
  tenantId: string,
  caching: RequestCaching,
  decision: Pick<AdmissionDecision, 'action' | 'cacheBytes'> | null,
): void {
  if (!ports.observe) return;
  if (decision === null || decision.cacheBytes === null) ports.observe(tenantId, caching.plan.status, null);
  else ports.observe(tenantId, decision.action === 'cached' ? 'hit' : 'miss', decision.cacheBytes);
}

/**
 * Serves a hit admission found (fresh for the request's max-age, the rate limits charged, and
 * nothing else taken: no budget, since its upstream cost is zero, and no slot of its key's
 * concurrency or its tenant's queue): its usage record queued, its events replayed.
 */
export async function serveHit(ports: CachePorts, operation: Operation, reply: FastifyReply, entry: string, context: HitContext): Promise<Dispatch> {
  const answer = decodeCachedAnswer(entry);
  const now = Date.now();
  // Whole milliseconds: the store keeps integers.
  await ports.record(hitRecord({ ...context.hit, receivedAt: Math.round(now - reply.elapsedTime) }, answer, ports.models[answer.model], now));
  reply.header('x-cache', 'hit');
  reply.header('age', String(Math.floor(Math.max(0, now - answer.storedAt) / 1000)));
  return replayed(operation, answer, context.payload, { requestId: context.hit.requestId, stream: context.hit.stream });
}
