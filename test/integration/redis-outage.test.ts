/**
 * A Redis outage is a 503, never a hang: the web tier against a private redis-server that the test kills. How
 * fast the 503 comes is a matter of load, not of behaviour; what must hold is that the request is refused
 * rather than left to wait for a queue that cannot take it, so it is answered before the queue's deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.ts';
import { startWebTier, type WebTier } from '../../src/web/web-tier.ts';
import { generateApiKey } from '../../src/domain/access/api-key-secret.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { freePort } from '../helpers/free-port.ts';

let redisServer: ChildProcess;
let database: TestDatabase;
let web: WebTier;
let dir: string;
let secret: string;

// Far above a refusal's time on any machine, far below the test's own timeout: a request that waited for the queue
// would be answered at this deadline, not before it.
const QUEUE_DEADLINE_MS = 10_000;

beforeAll(async () => {
  const port = await freePort();
  redisServer = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis(port, '127.0.0.1', { retryStrategy: () => 50 });
  probe.on('error', () => undefined);
  await probe.ping();
  await probe.quit();
  database = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'gw-outage-'));
  await writeFile(join(dir, 'catalog.json'), JSON.stringify(testCatalog('http://127.0.0.1:9/v1')));
  web = await startWebTier(
    loadConfig({
      REDIS_URL: `redis://127.0.0.1:${port}`,
      DATABASE_URL: database.url,
      CATALOG: join(dir, 'catalog.json'),
      QUEUE_DEADLINE_MS: String(QUEUE_DEADLINE_MS),
    }),
    pino({ level: 'silent' }),
  );
  await web.repository.migrate();
  await web.repository.tenants.create({ id: 'acme', name: 'Acme' });
  const key = generateApiKey();
  await web.repository.apiKeys.create({ id: key.id, tenantId: 'acme', role: 'app', secretHash: key.secretHash });
  secret = key.secret;
});

afterAll(async () => {
  redisServer?.kill('SIGKILL');
  await web?.close();
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('Redis outage', () => {
  it('completions answer 503 service_unavailable before the queue deadline, and /readyz says not ready', async () => {
    redisServer.kill('SIGKILL');
    await once(redisServer, 'exit');
    const started = Date.now();
    const response = await web.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer ${secret}` },
      payload: { model: 'fake-gpt', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(Date.now() - started).toBeLessThan(QUEUE_DEADLINE_MS);
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json().error).toMatchObject({ code: 'service_unavailable', type: 'api_error', param: null });
    expect(response.json().error.request_id).toBe(response.headers['x-request-id']);
    expect(response.headers['retry-after']).toBe('1');
    const ready = await web.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
  });
});
