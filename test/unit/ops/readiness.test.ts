import { describe, expect, it } from 'vitest';
import { checkReadiness, type Dependency } from '../../../src/infra/health/readiness.ts';
import { ServiceUnavailableError } from '../../../src/errors/gateway-error.ts';

const up = (name: string, found: Record<string, unknown> = {}): Dependency => ({ name, required: true, probe: async () => found });
const down = (name: string, required: boolean, why: string): Dependency => ({ name, required, probe: async () => Promise.reject(new Error(why)) });

describe('checkReadiness', () => {
  it('reports every dependency up, with its round trip and what it found', async () => {
    const report = await checkReadiness([up('redis'), up('queue', { worker_seen_ms_ago: 12 })], { details: true });
    expect(report).toEqual({
      status: 'ready',
      checks: { redis: { state: 'up', latency_ms: expect.any(Number) }, queue: { state: 'up', latency_ms: expect.any(Number), worker_seen_ms_ago: 12 } },
    });
  });

  it('is degraded, not unready, when only an optional dependency is down', async () => {
    expect(await checkReadiness([up('redis'), down('queue', false, 'no worker')], { details: true })).toMatchObject({
      status: 'degraded',
      checks: { redis: { state: 'up' }, queue: { state: 'down', error: 'no worker' } },
    });
  });

  it('throws 503 naming every state when a required dependency is down', async () => {
    const failure = checkReadiness([down('redis', true, 'connection refused'), up('store')], { details: true });
    await expect(failure).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(failure).rejects.toThrow('Not ready: redis down (connection refused); store up.');
  });

  it('names no reason without details, since the public port answers anyone', async () => {
    expect(await checkReadiness([up('redis'), down('queue', false, 'redis at 10.0.0.7:6379 refused')], { details: false })).toMatchObject({
      checks: { queue: { state: 'down', error: 'unavailable' } },
    });
    await expect(checkReadiness([down('redis', true, 'connect ECONNREFUSED 10.0.0.7:6379')], { details: false })).rejects.toThrow(
      'Not ready: redis down (unavailable).',
    );
  });

  it('gives a hanging probe up after two seconds', async () => {
    const started = Date.now();
    const hanging: Dependency = { name: 'store', required: true, probe: () => new Promise(() => {}) };
    await expect(checkReadiness([hanging], { details: true })).rejects.toThrow('store down (no answer within 2000 ms)');
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
