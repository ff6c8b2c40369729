import { Type, type Static } from '@sinclair/typebox';
import type { DataPolicy, Repository } from '../../infra/store/repository.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import type { Actor } from '../prompts/prompt-admin.ts';
import type { DataPolicySettings } from './tenant-settings.ts';

/** The longest retention a tenant may set: ten years. */
export const MAX_RETENTION_DAYS = 3650;

/** A data policy as sent: both fields, as PUT replaces the policy. */
export const DataPolicyInputSchema = Type.Object(
  {
    store_responses: Type.Boolean({ description: "False: 'store: true' is ignored and 'previous_response_id' refused." }),
    retention_days: Type.Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS, description: 'Days a stored response is kept before the sweep removes it.' }),
  },
  { additionalProperties: false },
);

/** What data policy administration needs. */
export interface DataPolicyAdminDeps {
  repository: Repository;
  audit: AuditSink;
  /** Drops the tenant's cached settings in every web process. */
  invalidate(tenantId: string): Promise<void>;
}

/** Replaces the tenant's data policy, audited; every web process applies it at once. */
export async function setDataPolicy(deps: DataPolicyAdminDeps, tenantId: string, input: Static<typeof DataPolicyInputSchema>, by: Actor): Promise<DataPolicy> {
  const policy = await deps.repository.policies.setData({ tenantId, storeResponses: input.store_responses, retentionDays: input.retention_days });
  await deps.audit(
    auditEvent({
      tenantId,
      actor: by.actor,
      action: 'policy.data_updated',
      target: `tenant:${tenantId}`,
      outcome: 'success',
      requestId: by.requestId,
      details: { store_responses: policy.storeResponses, retention_days: policy.retentionDays },
    }),
  );
  await deps.invalidate(tenantId);
  return policy;
}

/** A data policy on the wire. */
export function dataPolicyJson(policy: DataPolicySettings) {
  return { object: 'data_policy', store_responses: policy.storeResponses, retention_days: policy.retentionDays };
}
