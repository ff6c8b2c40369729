/** One tenant's burst waits in the queue (bounded, then 429) while another tenant's requests start at once. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually, type JsonResponse } from '../helpers/http.ts';

let gateway: GatewayUnderTest;

beforeAll(async () => {
  // 16 jobs at a time of 40 ms each, one request per job: about 400 completions a second, so a burst
  // of 2,000 takes seconds to drain (jobs of several requests would drain it in a fraction of that).
  // A tenant's first 16 outstanding requests go plainly into the queue, the rest wait behind other tenants'.
  gateway = await startGateway({
    catalog: testCatalog('http://127.0.0.1:9/v1'),
    env: {
      WORKER_CONCURRENCY: '16',
      QUEUE_BATCH_MAX: '1',
      TENANT_FAIR_SHARE: '16',
      TENANT_MAX_QUEUED: '1000',
      TENANT_RPM: '0',
      TENANT_TPM: '0',
      KEY_RPM: '0',
      KEY_TPM: '0',
    },
  });
});

afterAll(async () => {
  await gateway?.close();
});

function ask(secret: string): Promise<JsonResponse> {
  return call(gateway.origin, secret, 'POST', '/v1/chat/completions', { model: 'sim-slow', messages: [{ role: 'user', content: 'hi' }] });
}

describe('fair queueing', () => {
  it("a burst of 2,000 from one tenant: the excess gets 429, and another tenant's requests never wait behind it (median under 50 ms)", async () => {
    const noisy = (await gateway.issueKey('noisy', 'app')).secret;
    const quiet = (await gateway.issueKey('quiet', 'developer')).secret;
    let answered = 0;
    const burst = Promise.all(Array.from({ length: 2000 }, () => ask(noisy).finally(() => answered++)));
    // Queue wait is measured from enqueueing; wait until the web tier has admitted the burst (the excess is
    // answered 429 at admission), so the quiet tenant's waits are not its requests' turn behind 2,000 admissions.
    while (answered < 900) await new Promise((resolve) => setTimeout(resolve, 20));
    const quietIds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const response = await ask(quiet);
      expect(response.status).toBe(200);
      quietIds.push(response.body.request_id);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const results = await burst;
    const refused = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1000);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]?.body.error).toMatchObject({ code: 'rate_limit_exceeded' });
    await eventually(async () => (await call(gateway.origin, quiet, 'GET', '/v1/usage?since=2000-01-01')).body.data.length === 8, 10_000, 'quiet records');
    const waits = (await call(gateway.origin, quiet, 'GET', '/v1/usage?since=2000-01-01')).body.data
      .map((r: { queue_wait_ms: number }) => r.queue_wait_ms)
      .reverse();
    const noisyWaits = await call(gateway.origin, (await gateway.issueKey('noisy', 'developer')).secret, 'GET', '/v1/usage?since=2000-01-01&limit=1000');
    const noisyMax = Math.max(...noisyWaits.body.data.map((r: { queue_wait_ms: number }) => r.queue_wait_ms));
    console.log(`fair queueing: quiet tenant queue waits ${waits.join(', ')} ms; noisy tenant's longest wait ${noisyMax} ms`);
    expect(noisyMax).toBeGreaterThan(500);
    // Behind the burst a request would wait seconds, as the noisy tenant's did. A busy 2-core machine
    // can add tens of milliseconds to one request (58 ms seen once in CI-like runs), so the bound on
    // the slowest is a fraction of the burst's wait, and the typical wait is held to 50 ms.
    const sorted = [...waits].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(50);
    expect(Math.max(...waits)).toBeLessThan(Math.min(250, noisyMax / 4));
  });
});
