/**
 * PostgreSQL with nothing to install: PGlite (PostgreSQL compiled to WebAssembly, running in
 * this process) served over the wire protocol on a loopback port, so that the ordinary pg
 * adapter, its pools and its migrations use it as they use a PostgreSQL server.
 */
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { claimPidFile } from './pid-file.ts';
import { servePglite } from './pglite-wire-server.ts';

/** A running embedded PostgreSQL. */
export interface EmbeddedPostgres {
  /** A pg connection string for it. */
  url: string;
  /** Stops serving, closes the database cleanly and frees its directory. */
  stop(): Promise<void>;
}

/** Opens (creating on first use) the database in `dataDir` and serves it on a free loopback port. */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  await mkdir(dirname(dataDir), { recursive: true });
  const release = claimPidFile(`${dataDir}.pid`, `the embedded PostgreSQL in ${dataDir}`);
  let db: PGlite | undefined;
  try {
    db = await PGlite.create({ dataDir });
    const server = await servePglite(db, '127.0.0.1');
    const opened = db;
    return {
      // PGlite has one database, `postgres`, whatever name a client asks for.
      url: `postgres://postgres@127.0.0.1:${server.port}/postgres`,
      async stop() {
        await server.close();
        await opened.close();
        release();
      },
    };
  } catch (error) {
    await db?.close();
    release();
    throw error;
  }
}
