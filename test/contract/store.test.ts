import mongoose from 'mongoose';
import { Client } from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { createStore } from '../../src/infra/store/create-store.ts';
import type { Repository } from '../../src/infra/store/repository.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { auditCases } from './store-cases/audit.ts';
import { batchCases } from './store-cases/batches.ts';
import { budgetCases } from './store-cases/budgets.ts';
import { fileCases } from './store-cases/files.ts';
import { policyCases } from './store-cases/policies.ts';
import type { AuditTamper, StoreContext } from './store-cases/context.ts';
import { promptCases } from './store-cases/prompts.ts';
import { responseCases } from './store-cases/responses.ts';
import { tenantAndKeyCases } from './store-cases/tenants-keys.ts';
import { usageCases } from './store-cases/usage.ts';
import { webhookCases } from './store-cases/webhooks.ts';

/** An adapter opened for one suite run, a way around it, and what removes its data afterwards. */
interface AdapterUnderTest {
  repo: Repository;
  tamper: AuditTamper;
  teardown(): Promise<void>;
}

/** The one contract every Repository adapter must satisfy. */
function repositoryContract(title: string, kind: Repository['kind'], open: () => Promise<AdapterUnderTest>, options: { skip?: boolean } = {}): void {
  (options.skip ? describe.skip : describe)(title, () => {
    let adapter: AdapterUnderTest | undefined;
    const opened = (): AdapterUnderTest => {
      if (!adapter) throw new Error('adapter not opened');
      return adapter;
    };
    const store: StoreContext = { repo: () => opened().repo, tamper: () => opened().tamper };

    beforeAll(async () => {
      adapter = await open();
      await adapter.repo.migrate();
    });

    afterAll(async () => {
      await adapter?.repo.close();
      await adapter?.teardown();
    });

    describe('tenants and keys', () => tenantAndKeyCases(store, kind));
    describe('prompts', () => promptCases(store));
    describe('usage', () => usageCases(store));
    describe('audit', () => auditCases(store));
    describe('budgets', () => budgetCases(store));
    describe('policies', () => policyCases(store));
    describe('responses', () => responseCases(store));
    describe('webhooks', () => webhookCases(store));
    describe('files', () => fileCases(store));
    describe('batches', () => batchCases(store));
  });
}

/** Tampering through a plain pg client, as someone with database access would. */
function postgresTamper(url: string): AuditTamper {
  const run = async (sql: string, params: unknown[]) => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql, params);
    } finally {
      await client.end();
    }
  };
  return {
    async editEvent(id, change) {
      if (change.actor !== undefined) await run('UPDATE audit_events SET actor = $2 WHERE id = $1', [id, change.actor]);
      if (change.details !== undefined) await run('UPDATE audit_events SET details = $2::jsonb WHERE id = $1', [id, JSON.stringify(change.details)]);
    },
    deleteEvent: (id) => run('DELETE FROM audit_events WHERE id = $1', [id]),
  };
}

/** Tampering through a second connection's raw collection. */
async function mongoTamper(uri: string): Promise<{ tamper: AuditTamper; close(): Promise<void> }> {
  const connection = await mongoose.createConnection(uri).asPromise();
  const events = () => {
    if (!connection.db) throw new Error('tamper connection is not open');
    return connection.db.collection<{ _id: string }>('audit_events');
  };
  return {
    tamper: {
      editEvent: async (id, change) => void (await events().updateOne({ _id: id }, { $set: change })),
      deleteEvent: async (id) => void (await events().deleteOne({ _id: id })),
    },
    close: () => connection.close(),
  };
}

type MongoTarget = { uri: string; stop(): Promise<void> } | { skipReason: string };

const MEMORY_SERVER_TIMEOUT_MS = 20_000;

async function startMemoryServer(): Promise<{ uri: string; stop(): Promise<void> }> {
  const { MongoMemoryServer } = await import('mongodb-memory-server');
  const starting = MongoMemoryServer.create();
  const timeout = new Promise<never>((_, reject) => {
    setTimeout(() => reject(new Error(`timed out after ${MEMORY_SERVER_TIMEOUT_MS} ms`)), MEMORY_SERVER_TIMEOUT_MS).unref();
  });
  try {
    const server = await Promise.race([starting, timeout]);
    return { uri: server.getUri('gw_contract'), stop: async () => void (await server.stop()) };
  } catch (error) {
    // A server that starts after the timeout must not outlive the run.
    starting.then(
      (late) => late.stop(),
      () => undefined,
    );
    throw error;
  }
}

async function findMongo(): Promise<MongoTarget> {
  const uri = process.env.MONGODB_URI;
  if (uri) return { uri, stop: async () => undefined };
  try {
    return await startMemoryServer();
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
    return { skipReason: `no MONGODB_URI and mongodb-memory-server could not start: ${reason}` };
  }
}

repositoryContract('PostgreSQL adapter', 'postgres', async () => {
  const database = await createTestDatabase();
  return { repo: await createStore({ kind: 'postgres', databaseUrl: database.url }), tamper: postgresTamper(database.url), teardown: database.drop };
});

const mongo = await findMongo();
if ('skipReason' in mongo) {
  const title = `MongoDB adapter — SKIPPED: ${mongo.skipReason}`;
  console.warn(`\n*** ${title} ***\n`);
  repositoryContract(title, 'mongodb', () => Promise.reject(new Error(title)), { skip: true });
} else {
  repositoryContract('MongoDB adapter', 'mongodb', async () => {
    const raw = await mongoTamper(mongo.uri);
    return {
      repo: await createStore({ kind: 'mongodb', mongodbUri: mongo.uri }),
      tamper: raw.tamper,
      teardown: async () => {
        await raw.close();
        await mongo.stop();
      },
    };
  });
}
