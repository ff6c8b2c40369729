/**
 * The queue board under /internal/queues: every path (page, static assets, JSON API, anything
 * else) is for the operator tenant's admins only; it shows every queue shard, read-only, and no
 * request bodies. Against a real web process with three queue shards and no worker, so that a job
 * put in a shard stays there to be looked at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { REQUEST_QUEUE } from '../../src/infra/redis/keys.ts';
import type { Role } from '../../src/infra/store/repository.ts';

const SHARDS = 3;
const SECRET_PROMPT = 'my card number is 4111 1111 1111 1111';

let gateway: GatewayUnderTest;
let operatorAdmin: string;
const others: Array<[string, string]> = [];
/** A static asset the page loads. */
let asset: string;

async function get(path: string, authorization?: string): Promise<Response> {
  return fetch(`${gateway.origin}${path}`, { headers: authorization === undefined ? {} : { authorization } });
}

beforeAll(async () => {
  gateway = await startGateway({ catalog: testCatalog('http://127.0.0.1:9/v1'), workers: 0, env: { QUEUE_SHARDS: String(SHARDS) } });
  operatorAdmin = (await gateway.issueKey('operator', 'admin')).secret;
  others.push(['acme admin', (await gateway.issueKey('acme', 'admin')).secret]);
  for (const role of ['developer', 'app', 'auditor'] as const satisfies readonly Role[])
    others.push([`operator ${role}`, (await gateway.issueKey('operator', role)).secret]);
  const page = await (await get('/internal/queues/', `Bearer ${operatorAdmin}`)).text();
  asset = `/internal/queues/${/href="(static\/[^"]+\.css)"/.exec(page)?.[1] as string}`;
});

afterAll(async () => {
  await gateway?.close();
});

// Paths of each kind the board serves, and one it does not.
const PATHS = [
  '/internal/queues',
  '/internal/queues/',
  '/internal/queues/api/queues',
  '/internal/queues/api/redis/stats',
  '/internal/queues/queue/shard0:completions',
  '/internal/queues/no-such-page',
];

describe("the operator tenant's admin", () => {
  it('gets the page and its assets', async () => {
    for (const path of ['/internal/queues', '/internal/queues/', '/internal/queues/queue/shard1:completions']) {
      const response = await get(path, `Bearer ${operatorAdmin}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(await response.text()).toContain('<title>Gateway queues</title>');
    }
    const css = await get(asset, `Bearer ${operatorAdmin}`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toContain('text/css');
  });

  it('sees every queue shard, read-only, in the API', async () => {
    const response = await get('/internal/queues/api/queues', `Bearer ${operatorAdmin}`);
    expect(response.status).toBe(200);
    const { queues } = (await response.json()) as { queues: Array<{ name: string; description: string; readOnlyMode: boolean }> };
    expect(queues.map((queue) => queue.name).sort()).toEqual(Array.from({ length: SHARDS }, (_, shard) => `shard${shard}:${REQUEST_QUEUE}`));
    for (const queue of queues) {
      expect(queue.readOnlyMode).toBe(true);
      expect(queue.description).toContain(gateway.keys.queuePrefix(Number(/^shard(\d+)/.exec(queue.name)?.[1])));
    }
    expect((await get('/internal/queues/api/redis/stats', `Bearer ${operatorAdmin}`)).status).toBe(200);
  });

  it('may sign in with Basic credentials, the key as password, as a browser does', async () => {
    const basic = `Basic ${Buffer.from(`operator:${operatorAdmin}`).toString('base64')}`;
    expect((await get('/internal/queues/', basic)).status).toBe(200);
    expect((await get(asset, basic)).status).toBe(200);
    expect((await get('/internal/queues/api/queues', basic)).status).toBe(200);
  });

  it('sees jobs without their request bodies', async () => {
    const queue = new Queue(REQUEST_QUEUE, { connection: gateway.redis, prefix: gateway.keys.queuePrefix(2) });
    await queue.add('batch', {
      requests: [{ requestId: 'req_board', tenantId: 'acme', operation: 'chat', body: { messages: [{ role: 'user', content: SECRET_PROMPT }] } }],
    });
    await queue.close();
    const response = await get('/internal/queues/api/queues?activeQueue=shard2:completions&status=waiting&page=1&jobsPerPage=10', `Bearer ${operatorAdmin}`);
    expect(response.status).toBe(200);
    const { queues } = (await response.json()) as { queues: Array<{ name: string; jobs: Array<{ data: { requests: unknown[] } }> }> };
    const jobs = queues.find((queue) => queue.name === 'shard2:completions')?.jobs ?? [];
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.data.requests).toEqual([{ requestId: 'req_board', tenantId: 'acme', operation: 'chat' }]);
    expect(JSON.stringify(queues)).not.toContain(SECRET_PROMPT);
  });

  it('gets 404 for a path the board does not serve', async () => {
    const response = await get('/internal/queues/no-such-page', `Bearer ${operatorAdmin}`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('gets 400, not a 5xx, for a query the board cannot decode', async () => {
    const response = await get('/internal/queues/api/queues?activeQueue=%ZZ', `Bearer ${operatorAdmin}`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('malformed_request');
  });

  it('cannot change a queue', async () => {
    const response = await fetch(`${gateway.origin}/internal/queues/api/queues/shard0:completions/pause`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${operatorAdmin}` },
    });
    expect(response.status).toBe(405);
    const { queues } = (await (await get('/internal/queues/api/queues', `Bearer ${operatorAdmin}`)).json()) as { queues: Array<{ isPaused: boolean }> };
    expect(queues.every((queue) => !queue.isPaused)).toBe(true);
  });
});

describe('anyone else', () => {
  it.each([...PATHS, 'asset'])('%s: 401 without credentials, with a Basic challenge', async (path) => {
    const response = await get(path === 'asset' ? asset : path);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect(await response.json()).toEqual({
      error: {
        type: 'authentication_error',
        code: 'missing_api_key',
        message: expect.any(String),
        param: null,
        request_id: response.headers.get('x-request-id'),
      },
    });
  });

  it.each([...PATHS, 'asset'])("%s: 403 for a tenant admin and for the operator tenant's other roles", async (path) => {
    for (const [who, key] of others) {
      const response = await get(path === 'asset' ? asset : path, `Bearer ${key}`);
      expect(response.status, who).toBe(403);
      expect(await response.json()).toEqual({
        error: {
          type: 'invalid_request_error',
          code: 'permission_denied',
          message: expect.stringContaining('view the job queues'),
          param: null,
          request_id: expect.stringMatching(/^req_/),
        },
      });
    }
  });
});
