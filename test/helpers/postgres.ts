/** Throwaway PostgreSQL databases for tests: one fresh database per suite, dropped afterwards. */
import { randomBytes } from 'node:crypto';
import { Client, escapeIdentifier } from 'pg';

/** Works on the development and CI machines (trust auth); override with TEST_DATABASE_URL. */
const DEFAULT_BASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** A created database: its name, a connection URL for it, and how to remove it. */
export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function onServer<T>(baseUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: baseUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates `gw_test_<random>` on the server of TEST_DATABASE_URL (or the local default). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const baseUrl = process.env.TEST_DATABASE_URL || DEFAULT_BASE_URL;
  const name = `gw_test_${randomBytes(6).toString('hex')}`;
  const identifier = escapeIdentifier(name);
  await onServer(baseUrl, (client) => client.query(`CREATE DATABASE ${identifier}`));
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    // FORCE ends sessions a test left open (e.g. a pool not yet closed after a failure).
    drop: () => onServer(baseUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${identifier} WITH (FORCE)`)).then(() => undefined),
  };
}
