/**
 * A new operation is one module and one entry in the list of operations. The echo fixture
 * (test/fixtures/operations/echo/), appended to the gateway's list, is served by the web tier
 * and run by a worker, both in-process against real Redis and PostgreSQL, with nothing else
 * written for it: its route answers through the admission chain and the queue, it is in the
 * OpenAPI document, it has a permission, and its job runs through the runner lookup. Its usage
 * record lands once PostgreSQL's CHECK names its kind: the migration a real operation adds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { loadConfig } from '../../../src/config.ts';
import { startWebTier, type WebTier } from '../../../src/web/web-tier.ts';
import { startWorker, type RunningWorker } from '../../../src/worker/start-worker.ts';
import { TRACING_OFF } from '../../../src/infra/tracing/tracing.ts';
import { generateApiKey } from '../../../src/domain/access/api-key-secret.ts';
import { byKind, OPERATIONS } from '../../../src/operations/index.ts';
import type { Role } from '../../../src/infra/store/repository.ts';
import { echo } from '../../fixtures/operations/echo/index.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.ts';
import { deletePrefix, TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';
import { testCatalog } from '../../helpers/test-catalog.ts';

const operations = [...OPERATIONS, echo];
const prefix = `t${Date.now().toString(36)}echo`;
const keys = {} as Record<Role, string>;
let database: TestDatabase;
let dir: string;
let web: WebTier;
let worker: RunningWorker;

/** What a migration for the new kind does: usage_records.operation's CHECK names every kind of the list. */
async function allowUsageKinds(url: string, kinds: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `ALTER TABLE usage_records DROP CONSTRAINT usage_records_operation_check, ADD CONSTRAINT usage_records_operation_check CHECK (operation IN (${kinds.map((kind) => `'${kind}'`).join(', ')}))`,
    );
  } finally {
    await client.end();
  }
}

function postEcho(role: Role, payload: unknown) {
  return web.app.inject({
    method: 'POST',
    url: '/v1/echo',
    headers: { authorization: `Bearer ${keys[role]}`, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
}

beforeAll(async () => {
  database = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'gw-echo-'));
  await writeFile(join(dir, 'catalog.json'), JSON.stringify(testCatalog('http://127.0.0.1:9/v1')));
  const config = loadConfig({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, DATABASE_URL: database.url, CATALOG: join(dir, 'catalog.json') });
  const log = pino({ level: 'silent' });
  web = await startWebTier(config, log, TRACING_OFF, operations);
  await web.repository.migrate();
  await allowUsageKinds(
    database.url,
    operations.map((operation) => operation.name),
  );
  worker = await startWorker(config, log, TRACING_OFF, operations);
  await web.repository.tenants.create({ id: 'acme', name: 'Acme' });
  for (const role of ['admin', 'app', 'auditor'] as const) {
    const key = generateApiKey();
    await web.repository.apiKeys.create({ id: key.id, tenantId: 'acme', role, secretHash: key.secretHash });
    keys[role] = key.secret;
  }
});

afterAll(async () => {
  await web?.close();
  await worker?.close();
  const redis = new Redis(TEST_REDIS_URL);
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('an operation appended to the list', () => {
  it('is served: its route runs through admission, the queue and its runner', async () => {
    const response = await postEcho('app', { model: 'sim', input: 'hello' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ object: 'echo', model: 'sim', input: 'hello' });
    expect(response.headers['x-request-id']).toMatch(/^req_/);
    expect(response.headers['x-ratelimit-remaining-requests']).toBeDefined();
  });

  it('is validated at the door and refuses other methods, in the envelope', async () => {
    const invalid = await postEcho('app', { model: 'sim' });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error).toMatchObject({ code: 'missing_required_field', param: 'input' });
    const other = await web.app.inject({ method: 'GET', url: '/v1/echo', headers: { authorization: `Bearer ${keys.app}` } });
    expect(other.statusCode).toBe(405);
    expect(other.headers.allow).toBe('POST');
  });

  it('has a permission: the roles it names may call it, the others get 403', async () => {
    const denied = await postEcho('auditor', { model: 'sim', input: 'hello' });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error).toMatchObject({ code: 'permission_denied', message: "The role 'auditor' may not echo." });
  });

  it('is in the OpenAPI document', async () => {
    const document = (await web.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(document.paths['/v1/echo'].post).toMatchObject({ operationId: 'createEcho', tags: ['Echo'], security: [{ bearer: [] }] });
    expect(Object.keys(document.paths['/v1/echo'].post.responses)).toContain('403');
  });

  it('is found by its job kind, which names its usage records', async () => {
    expect(byKind(operations).get('echo')).toBe(echo);
    const recorded = async () => {
      const usage = await web.app.inject({
        method: 'GET',
        url: `/v1/usage?since=${new Date().toISOString().slice(0, 10)}`,
        headers: { authorization: `Bearer ${keys.admin}` },
      });
      return (usage.json().data as Array<{ operation: string; model: string }>).filter((record) => record.operation === 'echo');
    };
    await expect.poll(recorded, { timeout: 10_000, interval: 100 }).toEqual([expect.objectContaining({ operation: 'echo', model: 'sim' })]);
  });
});
