/** The PostgreSQL schema as an ordered list of migrations, applied once each and recorded. */
import type { Pool, PoolClient } from 'pg';
import { ignoreDroppedConnection } from './transaction.ts';

/** One schema change; `version` orders them and is never reused. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Applied migrations are history: never edit one, append a new version instead.
/** Every migration, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tenants and api keys',
    sql: `
      CREATE TABLE tenants (
        id text PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        tenant_id text NOT NULL REFERENCES tenants (id),
        role text NOT NULL CHECK (role IN ('admin', 'developer', 'app', 'auditor')),
        secret_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_tenant_id_created_at_idx ON api_keys (tenant_id, created_at);
    `,
  },
  {
    version: 2,
    name: 'prompts and their versions',
    sql: `
      CREATE TABLE prompts (
        tenant_id text NOT NULL,
        name text NOT NULL,
        active_version integer NOT NULL,
        last_version integer NOT NULL,
        PRIMARY KEY (tenant_id, name)
      );
      CREATE TABLE prompt_versions (
        tenant_id text NOT NULL,
        name text NOT NULL,
        version integer NOT NULL,
        messages jsonb NOT NULL,
        model text NOT NULL,
        parameters jsonb NOT NULL,
        variables text[] NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text NOT NULL,
        PRIMARY KEY (tenant_id, name, version),
        FOREIGN KEY (tenant_id, name) REFERENCES prompts (tenant_id, name)
      );
    `,
  },
  {
    version: 3,
    name: 'usage records',
    sql: `
      CREATE TABLE usage_records (
        request_id text PRIMARY KEY,
        tenant_id text NOT NULL,
        key_id text NOT NULL,
        feature text,
        requested_model text NOT NULL,
        model text NOT NULL,
        provider text NOT NULL,
        upstream_model text NOT NULL,
        prompt_name text,
        prompt_version integer,
        prompt_tokens integer NOT NULL,
        completion_tokens integer NOT NULL,
        total_tokens integer NOT NULL,
        usage_source text NOT NULL CHECK (usage_source IN ('provider', 'estimated')),
        cost_micros bigint NOT NULL,
        status text NOT NULL CHECK (status IN ('succeeded', 'failed', 'cancelled')),
        error_code text,
        queue_wait_ms integer NOT NULL,
        ttft_ms integer,
        latency_ms integer NOT NULL,
        stream boolean NOT NULL,
        pii_flags text[] NOT NULL,
        created_at timestamptz NOT NULL
      );
      -- Every query is one tenant's time range, newest first; the filtered ones get their own
      -- prefix so a rare model or feature does not scan the tenant's whole range.
      CREATE INDEX usage_records_tenant_created_idx ON usage_records (tenant_id, created_at DESC, request_id DESC);
      CREATE INDEX usage_records_tenant_model_created_idx ON usage_records (tenant_id, model, created_at DESC, request_id DESC);
      CREATE INDEX usage_records_tenant_key_created_idx ON usage_records (tenant_id, key_id, created_at DESC, request_id DESC);
      CREATE INDEX usage_records_tenant_feature_created_idx ON usage_records (tenant_id, feature, created_at DESC, request_id DESC)
        WHERE feature IS NOT NULL;
    `,
  },
  {
    version: 4,
    name: 'audit events',
    sql: `
      CREATE TABLE audit_events (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        seq bigint NOT NULL,
        actor text NOT NULL,
        action text NOT NULL,
        target text,
        outcome text NOT NULL,
        request_id text,
        details jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL,
        UNIQUE (tenant_id, seq)
      );
      CREATE INDEX audit_events_tenant_action_seq_idx ON audit_events (tenant_id, action, seq);
      CREATE INDEX audit_events_tenant_actor_seq_idx ON audit_events (tenant_id, actor, seq);
      -- One row per tenant: the end of its chain, locked by every append (seq 0 = no events yet).
      -- verify() compares it with the last event, so removing events from the end is detected too.
      CREATE TABLE audit_heads (
        tenant_id text PRIMARY KEY,
        seq bigint NOT NULL,
        hash text NOT NULL,
        last_id text
      );
    `,
  },
  {
    version: 5,
    name: 'budget policies, credit top-ups and tenant plans',
    sql: `
      -- "window" is a reserved word, hence budget_window.
      CREATE TABLE budget_policies (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        feature text,
        budget_window text NOT NULL CHECK (budget_window IN ('hour', 'day', 'month')),
        limit_micros bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX budget_policies_tenant_created_idx ON budget_policies (tenant_id, created_at, id);
      CREATE TABLE credit_top_ups (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        amount_micros bigint NOT NULL,
        actor text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX credit_top_ups_tenant_idx ON credit_top_ups (tenant_id);
      CREATE TABLE tenant_plans (
        tenant_id text PRIMARY KEY,
        requests_per_minute integer,
        tokens_per_minute integer,
        key_requests_per_minute integer,
        key_tokens_per_minute integer,
        max_queued integer
      );
    `,
  },
  {
    version: 6,
    name: 'pii policies',
    sql: `
      CREATE TABLE pii_policies (
        tenant_id text PRIMARY KEY,
        mode text NOT NULL CHECK (mode IN ('block', 'mask', 'flag', 'off')),
        critical text[] NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: 'usage token details',
    sql: `
      ALTER TABLE usage_records
        ADD COLUMN cached_tokens integer NOT NULL DEFAULT 0,
        ADD COLUMN cache_write_tokens integer NOT NULL DEFAULT 0,
        ADD COLUMN reasoning_tokens integer NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 8,
    name: 'usage operation',
    sql: `
      ALTER TABLE usage_records
        ADD COLUMN operation text NOT NULL DEFAULT 'chat' CHECK (operation IN ('chat', 'embeddings', 'messages', 'responses'));
    `,
  },
  {
    version: 9,
    name: 'disabled tenants, key names and expiry',
    sql: `
      ALTER TABLE tenants ADD COLUMN disabled boolean NOT NULL DEFAULT false;
      ALTER TABLE api_keys
        ADD COLUMN name text,
        ADD COLUMN expires_at timestamptz;
    `,
  },
  {
    version: 10,
    name: 'stored responses, data policies and the response of a usage record',
    sql: `
      -- A deleted response keeps its row as a tombstone (deleted_at set, its content gone), so that
      -- no late write of its worker brings it back; only the sweep removes tombstones.
      CREATE TABLE responses (
        tenant_id text NOT NULL,
        id text NOT NULL,
        status text CHECK (status IN ('queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete')),
        background boolean NOT NULL DEFAULT false,
        response jsonb,
        previous_response_id text,
        created_at timestamptz NOT NULL,
        expires_at timestamptz,
        deleted_at timestamptz,
        PRIMARY KEY (tenant_id, id),
        CHECK ((deleted_at IS NULL) = (status IS NOT NULL AND response IS NOT NULL))
      );
      -- What the sweep and the reaper look for, each a narrow range.
      CREATE INDEX responses_expires_idx ON responses (expires_at) WHERE deleted_at IS NULL AND expires_at IS NOT NULL;
      CREATE INDEX responses_created_idx ON responses (created_at) WHERE deleted_at IS NULL;
      CREATE INDEX responses_unfinished_idx ON responses (created_at) WHERE background AND status IN ('queued', 'in_progress');
      CREATE INDEX responses_deleted_idx ON responses (deleted_at) WHERE deleted_at IS NOT NULL;
      -- Each input item of a response and each item of its output, by position; found by id too.
      CREATE TABLE response_items (
        tenant_id text NOT NULL,
        response_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('input', 'output')),
        position integer NOT NULL,
        item_id text NOT NULL,
        item jsonb NOT NULL,
        PRIMARY KEY (tenant_id, response_id, kind, position),
        FOREIGN KEY (tenant_id, response_id) REFERENCES responses (tenant_id, id) ON DELETE CASCADE
      );
      CREATE INDEX response_items_tenant_item_idx ON response_items (tenant_id, item_id);
      CREATE TABLE data_policies (
        tenant_id text PRIMARY KEY,
        store_responses boolean NOT NULL,
        retention_days integer NOT NULL CHECK (retention_days > 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      ALTER TABLE usage_records ADD COLUMN response_id text;
    `,
  },
  {
    version: 11,
    name: 'webhook endpoints and deliveries',
    sql: `
      -- Secrets are kept as they are, not hashed: they sign every delivery.
      CREATE TABLE webhook_endpoints (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        url text NOT NULL,
        events text[] NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        secret text NOT NULL,
        previous_secret text,
        previous_secret_expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX webhook_endpoints_tenant_created_idx ON webhook_endpoints (tenant_id, created_at, id);
      CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        webhook_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_id text NOT NULL,
        event_type text NOT NULL,
        event jsonb NOT NULL,
        attempt integer NOT NULL,
        status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
        http_status integer,
        latency_ms integer NOT NULL,
        error text,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX webhook_deliveries_webhook_created_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
      CREATE INDEX webhook_deliveries_webhook_event_idx ON webhook_deliveries (webhook_id, event_id, attempt);
    `,
  },
  {
    version: 12,
    name: 'usage operation responses_compact',
    // Migration 8's CHECK, named by PostgreSQL for its column, with the compaction's kind added.
    sql: `
      ALTER TABLE usage_records
        DROP CONSTRAINT usage_records_operation_check,
        ADD CONSTRAINT usage_records_operation_check CHECK (operation IN ('chat', 'embeddings', 'messages', 'responses', 'responses_compact'));
    `,
  },
  {
    version: 13,
    name: 'files in chunks',
    // A file is visible once complete; until then its expiry is the sweep's horizon for an upload a crash cut short.
    sql: `
      CREATE TABLE files (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        purpose text NOT NULL,
        filename text NOT NULL,
        bytes bigint NOT NULL DEFAULT 0,
        lines bigint NOT NULL DEFAULT 0,
        complete boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL,
        expires_at timestamptz
      );
      CREATE INDEX files_tenant_created_idx ON files (tenant_id, created_at, id) WHERE complete;
      CREATE INDEX files_expires_idx ON files (expires_at) WHERE expires_at IS NOT NULL;
      -- Every chunk but a file's last holds the same number of bytes (src/infra/store/postgres/files.ts).
      CREATE TABLE file_chunks (
        file_id text NOT NULL REFERENCES files (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (file_id, seq)
      );
    `,
  },
  {
    version: 14,
    name: 'batches, their results, and the batch line of a usage record',
    sql: `
      CREATE TABLE batches (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        key_id text NOT NULL,
        dialect text NOT NULL CHECK (dialect IN ('openai', 'anthropic')),
        endpoint text NOT NULL,
        input_file_id text NOT NULL,
        completion_window text NOT NULL,
        status text NOT NULL CHECK (status IN ('validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled')),
        metadata jsonb,
        feature text,
        errors jsonb NOT NULL,
        total integer NOT NULL,
        segments jsonb NOT NULL,
        output_file_id text,
        error_file_id text,
        usage jsonb,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        in_progress_at timestamptz,
        finalizing_at timestamptz,
        completed_at timestamptz,
        failed_at timestamptz,
        expired_at timestamptz,
        cancelling_at timestamptz,
        cancelled_at timestamptz
      );
      -- A tenant's list, newest first; and the few batches not final, which the supervisor pages
      -- through by id in byte order (COLLATE "C", as MongoDB orders), whatever the database's collation.
      CREATE INDEX batches_tenant_dialect_created_idx ON batches (tenant_id, dialect, created_at DESC, id DESC);
      CREATE INDEX batches_active_idx ON batches (id COLLATE "C") WHERE status IN ('validating', 'in_progress', 'finalizing', 'cancelling');
      -- The files an unfinished batch reads, which may be neither deleted nor swept.
      CREATE INDEX batches_input_file_idx ON batches (tenant_id, input_file_id);
      -- One row per line that ran; the first written stays.
      CREATE TABLE batch_results (
        tenant_id text NOT NULL,
        batch_id text NOT NULL,
        line integer NOT NULL,
        custom_id text NOT NULL,
        request_id text NOT NULL,
        status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
        status_code integer NOT NULL,
        body text NOT NULL,
        input_tokens integer NOT NULL,
        cached_tokens integer NOT NULL,
        output_tokens integer NOT NULL,
        reasoning_tokens integer NOT NULL,
        total_tokens integer NOT NULL,
        PRIMARY KEY (batch_id, line)
      );
      ALTER TABLE usage_records ADD COLUMN batch_id text, ADD COLUMN custom_id text;
    `,
  },
  {
    version: 15,
    name: "API keys' own rate and concurrency limits",
    // NULL: the plan's key limit (or the configured default) applies; a key has no "unlimited" of its own.
    sql: `
      ALTER TABLE api_keys
        ADD COLUMN requests_per_minute integer CHECK (requests_per_minute > 0),
        ADD COLUMN tokens_per_minute integer CHECK (tokens_per_minute > 0),
        ADD COLUMN max_concurrent integer CHECK (max_concurrent > 0);
    `,
  },
  {
    version: 16,
    name: 'the deployment of a usage record',
    sql: `ALTER TABLE usage_records ADD COLUMN deployment text;`,
  },
  {
    version: 17,
    name: "tenants' response cache policies, and the cache hits of usage records",
    sql: `
      CREATE TABLE cache_policies (
        tenant_id text PRIMARY KEY,
        enabled boolean NOT NULL,
        default_ttl_s integer NOT NULL CHECK (default_ttl_s > 0),
        max_bytes bigint NOT NULL CHECK (max_bytes > 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      ALTER TABLE usage_records ADD COLUMN cache_hit boolean NOT NULL DEFAULT false;
    `,
  },
  {
    version: 18,
    name: "a plan's price of a response cache hit",
    sql: `ALTER TABLE tenant_plans ADD COLUMN cache_hit_price_micros bigint CHECK (cache_hit_price_micros >= 0);`,
  },
  {
    version: 19,
    name: "a usage record's Idempotency-Key digest",
    sql: `
      ALTER TABLE usage_records ADD COLUMN idempotency_key text;
      CREATE INDEX usage_records_tenant_idempotency_idx ON usage_records (tenant_id, idempotency_key, created_at)
        WHERE idempotency_key IS NOT NULL;`,
  },
];

// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK_KEY = 7_316_402_911;

async function applyMigration(client: PoolClient, migration: Migration): Promise<void> {
  try {
    await client.query('BEGIN');
    await client.query(migration.sql);
    await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    await client.query('COMMIT');
  } catch (error) {
    // If ROLLBACK fails the connection is gone; the migration's own error is the one worth reporting.
    await client.query('ROLLBACK').catch(() => undefined);
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Migration ${migration.version} (${migration.name}) failed: ${reason}`, { cause: error });
  }
}

/** Applies the migrations not yet recorded in schema_migrations, in order; safe to run concurrently. */
export async function runMigrations(pool: Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<void> {
  const client = await pool.connect();
  client.on('error', ignoreDroppedConnection);
  try {
    // Two `release` processes may start together; the session lock makes the second wait, then find nothing to do.
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const applied = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(applied.rows.map((row) => row.version));
    const pending = [...migrations].sort((a, b) => a.version - b.version).filter((m) => !done.has(m.version));
    for (const migration of pending) await applyMigration(client, migration);
  } finally {
    const unlocked = await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).then(
      () => true,
      () => false,
    );
    client.off('error', ignoreDroppedConnection);
    // Destroying a client we could not unlock ends its session, which frees the lock.
    client.release(!unlocked);
  }
}
