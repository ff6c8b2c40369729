import { Type, type Static } from '@sinclair/typebox';
import type { PiiPolicy, Repository } from '../../infra/store/repository.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import type { Actor } from '../prompts/prompt-admin.ts';
import { PII_CATEGORIES } from './types.ts';

/** A PII policy as sent; `critical` defaults to every category. */
export const PiiPolicyInputSchema = Type.Object(
  {
    mode: Type.Union([Type.Literal('block'), Type.Literal('mask'), Type.Literal('flag'), Type.Literal('off')]),
    critical: Type.Optional(Type.Array(Type.Union(PII_CATEGORIES.map((category) => Type.Literal(category))), { uniqueItems: true })),
  },
  { additionalProperties: false },
);

/** What PII policy administration needs. */
export interface PiiPolicyAdminDeps {
  repository: Repository;
  audit: AuditSink;
  invalidate(tenantId: string): Promise<void>;
}

/** Replaces the tenant's PII policy, audited; every web process applies it at once. */
export async function setPiiPolicy(deps: PiiPolicyAdminDeps, tenantId: string, input: Static<typeof PiiPolicyInputSchema>, by: Actor): Promise<PiiPolicy> {
  const policy = await deps.repository.policies.setPii({ tenantId, mode: input.mode, critical: input.critical ?? [...PII_CATEGORIES] });
  await deps.audit(
    auditEvent({
      tenantId,
      actor: by.actor,
      action: 'policy.pii_updated',
      target: `tenant:${tenantId}`,
      outcome: 'success',
      requestId: by.requestId,
      details: { mode: policy.mode, critical: policy.critical },
    }),
  );
  await deps.invalidate(tenantId);
  return policy;
}

/** A PII policy on the wire. */
export function piiPolicyJson(policy: PiiPolicy) {
  return { object: 'pii_policy', mode: policy.mode, critical: policy.critical };
}
