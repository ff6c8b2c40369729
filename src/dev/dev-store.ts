/**
 * Which store `npm run dev` uses: the configured one; with none configured, the local
 * PostgreSQL when one listens at dev's default address, else the embedded PostgreSQL (PGlite).
 */
import pg from 'pg';
import type { StoreConfig } from '../config.ts';
import { DevSetupError } from './dev-setup-error.ts';
import { listening } from './listening.ts';
import { withoutPassword } from './without-password.ts';

/** dev's default store: its own database on the local PostgreSQL (PGPORT, when set, names its port). */
export const DEV_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/gateway_dev';

/** The store dev runs on, a line that says which, and what gives it back. */
export interface DevStore {
  store: StoreConfig;
  description: string;
  stop(): Promise<void>;
}

const none = async () => undefined;

async function onServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function createDatabaseIfMissing(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  target.pathname = '/postgres';
  await onServer(target.toString(), async (client) => {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  });
}

function defaultDatabaseUrl(pgPort: string | undefined): URL {
  const url = new URL(DEV_DATABASE_URL);
  if (pgPort === undefined || pgPort === '') return url;
  const port = Number(pgPort);
  if (!/^\d+$/.test(pgPort) || port < 1 || port > 65_535)
    throw new DevSetupError(`PGPORT is ${JSON.stringify(pgPort)}, not a port number.`, 'Set it to the port of your PostgreSQL, or unset it (5432).');
  url.port = String(port);
  return url;
}

async function configuredStore(store: StoreConfig): Promise<DevStore> {
  if (store.kind === 'mongodb') return { store, description: `MongoDB at ${withoutPassword(store.mongodbUri)} (MONGODB_URI)`, stop: none };
  const shown = withoutPassword(store.databaseUrl);
  await onServer(store.databaseUrl, async () => undefined).catch((error: unknown) => {
    throw new DevSetupError(
      `cannot use the PostgreSQL of DATABASE_URL (${shown}): ${(error as Error).message}.`,
      'Start it or correct DATABASE_URL, or unset DATABASE_URL to run on the embedded PostgreSQL (PGlite) with nothing to install.',
    );
  });
  return { store, description: `PostgreSQL at ${shown} (DATABASE_URL)`, stop: none };
}

async function embeddedStore(dataDir: string, absent: string): Promise<DevStore> {
  // Loaded only here: PGlite's WebAssembly costs a few hundred milliseconds and tens of megabytes.
  const { startEmbeddedPostgres } = await import('./embedded-store.ts');
  const embedded = await startEmbeddedPostgres(dataDir);
  return {
    store: { kind: 'postgres', databaseUrl: embedded.url },
    description: `embedded PostgreSQL (PGlite) on ${embedded.url}, data in ${dataDir}, as no PostgreSQL listens at ${absent}`,
    stop: embedded.stop,
  };
}

/**
 * The store of `configured` when DATABASE_URL or MONGODB_URI named it (a PostgreSQL must accept dev); for
 * dev's default, the local PostgreSQL's `gateway_dev` database (created when missing) when a
 * PostgreSQL listens there, else PGlite with its data in `dataDir`.
 */
export async function devStore(configured: StoreConfig, pgPort: string | undefined, dataDir: string): Promise<DevStore> {
  if (configured.kind === 'mongodb' || configured.databaseUrl !== DEV_DATABASE_URL) return configuredStore(configured);
  const url = defaultDatabaseUrl(pgPort);
  if (!(await listening(url.hostname, Number(url.port)))) return embeddedStore(dataDir, url.host);
  await createDatabaseIfMissing(url.toString()).catch((error: unknown) => {
    throw new DevSetupError(
      `the PostgreSQL at ${url.host} refused dev: ${(error as Error).message}.`,
      `Let user postgres connect from 127.0.0.1 without a password (trust in pg_hba.conf), or set DATABASE_URL to a database dev may use.`,
    );
  });
  return { store: { kind: 'postgres', databaseUrl: url.toString() }, description: `PostgreSQL at ${url.toString()}`, stop: none };
}
