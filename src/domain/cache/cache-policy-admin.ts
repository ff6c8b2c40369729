import { Type, type Static } from '@sinclair/typebox';
import type { CachePolicy, Repository } from '../../infra/store/repository.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import type { Actor } from '../prompts/prompt-admin.ts';
import type { CachePolicySettings } from '../tenants/tenant-settings.ts';

/** The longest an answer may stay cached: 30 days, by default or by a request's `max-age`. */
export const MAX_CACHE_TTL_S = 30 * 86_400;

/** The most a tenant's cache may hold in Redis: 1 GiB (Redis runs without eviction; the operator sizes it). */
export const MAX_CACHE_BYTES = 1024 ** 3;

/** A response cache policy as sent: every field, as PUT replaces the policy. */
export const CachePolicyInputSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'False: nothing is read from or stored in the cache, whatever the request asks (`x-cache: bypass`).' }),
    default_ttl_s: Type.Integer({
      minimum: 1,
      maximum: MAX_CACHE_TTL_S,
      description: "Seconds an answer is kept, and may be served, when the request's Cache-Control names no max-age.",
    }),
    max_bytes: Type.Integer({
      minimum: 1024,
      maximum: MAX_CACHE_BYTES,
      description: "The most the tenant's cached answers may take in Redis; the oldest are evicted to make room.",
    }),
  },
  { additionalProperties: false },
);

/** What cache policy administration needs. */
export interface CachePolicyAdminDeps {
  repository: Repository;
  audit: AuditSink;
  /** Drops the tenant's cached settings in every web process. */
  invalidate(tenantId: string): Promise<void>;
}

/** Replaces the tenant's response cache policy, audited; every web process applies it at once. */
export async function setCachePolicy(
  deps: CachePolicyAdminDeps,
  tenantId: string,
  input: Static<typeof CachePolicyInputSchema>,
  by: Actor,
): Promise<CachePolicy> {
  const policy = await deps.repository.policies.setCache({ tenantId, enabled: input.enabled, defaultTtlS: input.default_ttl_s, maxBytes: input.max_bytes });
  await deps.audit(
    auditEvent({
      tenantId,
      actor: by.actor,
      action: 'policy.cache_updated',
      target: `tenant:${tenantId}`,
      outcome: 'success',
      requestId: by.requestId,
      details: { enabled: policy.enabled, default_ttl_s: policy.defaultTtlS, max_bytes: policy.maxBytes },
    }),
  );
  await deps.invalidate(tenantId);
  return policy;
}

/** A response cache policy on the wire. */
export function cachePolicyJson(policy: CachePolicySettings) {
  return { object: 'cache_policy', enabled: policy.enabled, default_ttl_s: policy.defaultTtlS, max_bytes: policy.maxBytes };
}
