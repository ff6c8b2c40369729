/**
 * The store contract on the embedded PostgreSQL `npm run dev` falls back to: PGlite behind
 * its wire server (src/dev/pglite-wire-server.ts), used by the ordinary pg adapter. PGlite is one session, so this also checks
 * that the server keeps the clients it multiplexes apart: the adapter's pool (transactions
 * included), a second repository beside it (as dev's worker is beside its web tier) and a
 * plain client all at once; and that the data outlives a stop.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/dev/embedded-store.ts';
import { createPostgresRepository } from '../../src/infra/store/postgres/adapter.ts';
import type { Repository } from '../../src/infra/store/repository.ts';
import { auditCases } from './store-cases/audit.ts';
import { budgetCases } from './store-cases/budgets.ts';
import type { AuditTamper, StoreContext } from './store-cases/context.ts';
import { uid } from './store-cases/context.ts';
import { policyCases } from './store-cases/policies.ts';
import { promptCases } from './store-cases/prompts.ts';
import { responseCases } from './store-cases/responses.ts';
import { tenantAndKeyCases } from './store-cases/tenants-keys.ts';
import { usageCases } from './store-cases/usage.ts';
import { webhookCases } from './store-cases/webhooks.ts';

let dir: string;
let embedded: EmbeddedPostgres;
let web: Repository;
let worker: Repository;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-embedded-'));
  embedded = await startEmbeddedPostgres(join(dir, 'pgdata'));
  web = createPostgresRepository(embedded.url);
  worker = createPostgresRepository(embedded.url);
  await web.migrate();
});

afterAll(async () => {
  await web?.close();
  await worker?.close();
  await embedded?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Tampering through a plain pg client of its own, one more connection to multiplex. */
const tamper: AuditTamper = {
  async editEvent(id, change) {
    if (change.actor !== undefined) await query('UPDATE audit_events SET actor = $2 WHERE id = $1', [id, change.actor]);
    if (change.details !== undefined) await query('UPDATE audit_events SET details = $2::jsonb WHERE id = $1', [id, JSON.stringify(change.details)]);
  },
  deleteEvent: (id) => query('DELETE FROM audit_events WHERE id = $1', [id]),
};

async function query(sql: string, params: unknown[]): Promise<void> {
  const client = new Client({ connectionString: embedded.url });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

describe('the PostgreSQL adapter on the embedded PostgreSQL', () => {
  const store: StoreContext = { repo: () => web, tamper: () => tamper };
  describe('tenants and keys', () => tenantAndKeyCases(store, 'postgres'));
  describe('prompts', () => promptCases(store));
  describe('usage', () => usageCases(store));
  describe('audit', () => auditCases(store));
  describe('budgets', () => budgetCases(store));
  describe('policies', () => policyCases(store));
  describe('responses', () => responseCases(store));
  describe('webhooks', () => webhookCases(store));
});

describe('several clients on its one session', () => {
  it("keeps each client's statements and transactions apart under concurrent load from two pools", async () => {
    const tenants = Array.from({ length: 20 }, () => `t-${uid()}`);
    await Promise.all(tenants.map((id, i) => (i % 2 ? web : worker).tenants.create({ id, name: `tenant ${id}` })));
    const appended = tenants.map((tenantId, i) =>
      (i % 2 ? worker : web).audit.append([
        {
          id: `aud_${uid()}${uid()}`,
          tenantId,
          actor: 'cli',
          action: 'tenant.created',
          target: tenantId,
          outcome: 'success',
          requestId: null,
          details: { i },
          createdAt: new Date(),
        },
      ]),
    );
    // Reads from both pools while the appends' transactions run.
    const read = tenants.map(async (id, i) => (await (i % 2 ? web : worker).tenants.get(id))?.name);
    await Promise.all(appended);
    expect(await Promise.all(read)).toEqual(tenants.map((id) => `tenant ${id}`));
    const verified = await Promise.all(tenants.map((id, i) => (i % 2 ? web : worker).audit.verify(id)));
    expect(verified).toEqual(tenants.map(() => ({ ok: true, events: 1 })));
  });

  it('ends the transaction of a client that fails inside it, leaving the others unaffected', async () => {
    const client = new Client({ connectionString: embedded.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await expect(client.query('SELECT 1 / 0')).rejects.toThrow(/division by zero/);
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }
    const id = `t-${uid()}`;
    await worker.tenants.create({ id, name: 'after a failed transaction' });
    expect((await web.tenants.get(id))?.name).toBe('after a failed transaction');
  });

  it('keeps its data when stopped and opened again', async () => {
    const id = `t-${uid()}`;
    await web.tenants.create({ id, name: 'kept' });
    await web.close();
    await worker.close();
    await embedded.stop();
    embedded = await startEmbeddedPostgres(join(dir, 'pgdata'));
    web = createPostgresRepository(embedded.url);
    worker = createPostgresRepository(embedded.url);
    await web.migrate();
    expect((await worker.tenants.get(id))?.name).toBe('kept');
  });
});
