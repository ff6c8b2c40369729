/** The PostgreSQL schema as an ordered list of migrations, applied once each and recorded. */
import type { Pool, PoolClient } from 'pg';

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
    const unlocked = await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).then(() => true, () => false);
    // Destroying a client we could not unlock ends its session, which frees the lock.
    client.release(!unlocked);
  }
}
