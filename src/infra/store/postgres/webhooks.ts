/** Webhook endpoints and their deliveries in PostgreSQL. */
import type { Pool } from 'pg';
import type { WebhookEvent, WebhookEventType } from '../../../domain/webhooks/webhook-event.ts';
import type { WebhookDelivery, WebhookEndpoint, WebhookRepository } from '../repository.ts';

interface EndpointRow {
  id: string;
  tenant_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface DeliveryRow {
  id: string;
  tenant_id: string;
  webhook_id: string;
  event: WebhookEvent;
  attempt: number;
  status: 'succeeded' | 'failed';
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  created_at: Date;
}

const ENDPOINT_COLUMNS = 'id, tenant_id, url, events, enabled, secret, previous_secret, previous_secret_expires_at, created_at, updated_at';
const DELIVERY_COLUMNS = 'id, tenant_id, webhook_id, event, attempt, status, http_status, latency_ms, error, created_at';

// SQLSTATE of a foreign key violation: the endpoint was deleted while its delivery was being recorded.
const FOREIGN_KEY_VIOLATION = '23503';

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    url: row.url,
    // Written from the event list only (src/domain/webhooks/webhook-admin.ts checks every type).
    events: row.events as WebhookEventType[],
    enabled: row.enabled,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    webhookId: row.webhook_id,
    event: row.event,
    attempt: row.attempt,
    status: row.status,
    httpStatus: row.http_status,
    latencyMs: row.latency_ms,
    error: row.error,
    createdAt: row.created_at,
  };
}

function sqlState(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

async function recordDelivery(pool: Pool, d: WebhookDelivery): Promise<void> {
  try {
    // Selected from the endpoint, so that a delivery of a deleted endpoint (or of another tenant's) is not recorded.
    await pool.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, event_id, event_type, event, attempt, status, http_status, latency_ms, error, created_at)
       SELECT $1, tenant_id, id, $4, $5, $6, $7, $8, $9, $10, $11, $12 FROM webhook_endpoints WHERE tenant_id = $2 AND id = $3
       ON CONFLICT (id) DO NOTHING`,
      [d.id, d.tenantId, d.webhookId, d.event.id, d.event.type, JSON.stringify(d.event), d.attempt, d.status, d.httpStatus, d.latencyMs, d.error, d.createdAt],
    );
  } catch (error) {
    if (sqlState(error) !== FOREIGN_KEY_VIOLATION) throw error;
  }
}

/** The webhook repository over a pool. */
export function createWebhookRepository(pool: Pool): WebhookRepository {
  const one = async (sql: string, params: unknown[]) => {
    const row = (await pool.query<EndpointRow>(sql, params)).rows[0];
    return row ? toEndpoint(row) : null;
  };
  return {
    async create(endpoint) {
      const created = await one(
        `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret) VALUES ($1, $2, $3, $4, $5) RETURNING ${ENDPOINT_COLUMNS}`,
        [endpoint.id, endpoint.tenantId, endpoint.url, endpoint.events, endpoint.secret],
      );
      return created as WebhookEndpoint;
    },
    get: (tenantId, id) => one(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2`, [tenantId, id]),
    async list(tenantId) {
      const result = await pool.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 ORDER BY created_at, id`, [
        tenantId,
      ]);
      return result.rows.map(toEndpoint);
    },
    async listSubscribed(tenantId, eventType) {
      const result = await pool.query<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 AND enabled AND $2 = ANY (events) ORDER BY created_at, id`,
        [tenantId, eventType],
      );
      return result.rows.map(toEndpoint);
    },
    update: (tenantId, id, change) =>
      one(
        `UPDATE webhook_endpoints SET url = COALESCE($3, url), events = COALESCE($4, events), enabled = COALESCE($5, enabled), updated_at = now()
         WHERE tenant_id = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
        [tenantId, id, change.url ?? null, change.events ?? null, change.enabled ?? null],
      ),
    rotateSecret: (tenantId, id, secret, previousExpiresAt) =>
      one(
        `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = $4, secret = $3, updated_at = now()
         WHERE tenant_id = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
        [tenantId, id, secret, previousExpiresAt],
      ),
    async delete(tenantId, id) {
      // The deliveries go with it (ON DELETE CASCADE).
      const result = await pool.query('DELETE FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
      return (result.rowCount ?? 0) > 0;
    },
    recordDelivery: (delivery) => recordDelivery(pool, delivery),
    async listDeliveries(tenantId, webhookId, page) {
      const result = await pool.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
         WHERE tenant_id = $1 AND webhook_id = $2
           AND ($4::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 AND id = $4))
         ORDER BY created_at DESC, id DESC LIMIT $3`,
        [tenantId, webhookId, page.limit, page.after],
      );
      return result.rows.map(toDelivery);
    },
    async getDelivery(tenantId, webhookId, id) {
      const result = await pool.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 AND id = $3`, [
        tenantId,
        webhookId,
        id,
      ]);
      return result.rows[0] ? toDelivery(result.rows[0]) : null;
    },
    async lastAttempt(tenantId, webhookId, eventId) {
      const result = await pool.query<{ last: number | null }>(
        'SELECT max(attempt) AS last FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 AND event_id = $3',
        [tenantId, webhookId, eventId],
      );
      return result.rows[0]?.last ?? 0;
    },
  };
}
