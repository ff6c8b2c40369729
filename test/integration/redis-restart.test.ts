/**
 * A Redis that restarts without its data loses the queued jobs: the requests waiting on them are
 * answered 503 as soon as the web process's reply subscription is back, not at the pickup deadline.
 * Web and worker processes against a private redis-server the test restarts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import OpenAI, { APIError } from 'openai';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { freePort } from '../helpers/free-port.ts';
import { startRedisServer } from '../helpers/restartable-redis.ts';

let port: number;
let redisServer: ChildProcess;
let gateway: GatewayUnderTest;

beforeAll(async () => {
  port = await freePort();
  redisServer = await startRedisServer(port);
  // No worker: the jobs wait in the queue, for a pickup deadline far longer than the test; one job per request.
  gateway = await startGateway({
    catalog: testCatalog('http://127.0.0.1:9/v1'),
    workers: 0,
    env: { REDIS_URL: `redis://127.0.0.1:${port}`, QUEUE_DEADLINE_MS: '30000', QUEUE_BATCH_MAX: '1' },
  });
});

afterAll(async () => {
  await gateway?.close();
  redisServer?.kill('SIGKILL');
});

describe('Redis restarted without its data', () => {
  it('answers the requests whose jobs it lost with 503 and Retry-After at once, not after QUEUE_DEADLINE_MS', async () => {
    const { secret } = await gateway.issueKey('acme', 'app');
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: secret, maxRetries: 0 });
    const waiting = Array.from({ length: 5 }, (_, i) =>
      client.chat.completions
        .create({ model: 'sim', messages: [{ role: 'user', content: `request ${i}` }] })
        .withResponse()
        .then(
          () => null,
          (e: unknown) => e,
        ),
    );
    const queued = new Redis(port, '127.0.0.1');
    // Every job is in the queue (one still being added would land in the new server): then lose them with the server.
    const waitingJobs = async () => {
      const [list] = await queued.keys('*:wait');
      return list === undefined ? 0 : queued.llen(list);
    };
    while ((await waitingJobs()) < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    queued.disconnect();
    redisServer.kill('SIGKILL');
    await once(redisServer, 'exit');
    const restartedAt = Date.now();
    redisServer = await startRedisServer(port);
    const errors = await Promise.all(waiting);
    const took = Date.now() - restartedAt;
    for (const error of errors) {
      expect(error).toBeInstanceOf(APIError);
      expect(error).toMatchObject({ status: 503, code: 'service_unavailable', type: 'api_error' });
      expect(Number((error as APIError).headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((error as Error).message).toMatch(/lost this request when its Redis restarted/);
    }
    expect(took).toBeLessThan(10_000);
  });
});
