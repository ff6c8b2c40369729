/** Tenant ids: one pattern for the CLI, the internal API and JWT claims. */
import { Type } from '@sinclair/typebox';

// Tenant ids appear in URLs, Redis keys and logs, so they stay short and plain.
const TENANT_ID = '[a-z0-9][a-z0-9_-]{0,62}';
const TENANT_ID_SOURCE = `^${TENANT_ID}$`;

/** 1-63 characters of a-z, 0-9, '_' and '-', starting with a letter or digit. */
export const TENANT_ID_PATTERN = new RegExp(TENANT_ID_SOURCE);

/** A tenant id in a request schema (or a setting). */
export const TenantIdSchema = Type.String({ pattern: TENANT_ID_SOURCE });

/** Tenant ids separated by commas, or `*` for every tenant, or nothing (METRICS_TENANTS). */
export const TENANT_LIST_SOURCE = `^(\\*|${TENANT_ID}(,${TENANT_ID})*)?$`;
