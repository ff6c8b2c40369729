import { describe, expect, it } from 'vitest';
import { isRedisUnavailable } from '../../../src/infra/redis/connections.ts';
import { retryUnavailable } from '../../../src/infra/redis/retry-unavailable.ts';

const FAST = { totalMs: 200, firstDelayMs: 5, maxDelayMs: 20 };

/** A step that fails with `errors` in turn, then answers 'done'; it counts its calls. */
function failing(...errors: Error[]) {
  const step = async () => {
    step.calls += 1;
    const error = errors.shift();
    if (error) throw error;
    return 'done';
  };
  step.calls = 0;
  return step;
}

describe('isRedisUnavailable', () => {
  it('knows what ioredis 6 says while a cluster master is down', () => {
    for (const message of [
      'Too many Cluster redirections. Last error: ReplyError: MOVED 11185 127.0.0.1:41571',
      'CLUSTERDOWN The cluster is down',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      'Connection is closed.',
      'Command aborted due to connection close',
      "Cluster isn't ready and enableOfflineQueue options is false",
      'LOADING Redis is loading the dataset in memory',
    ]) {
      expect(isRedisUnavailable(new Error(message)), message).toBe(true);
    }
  });

  it('leaves out what a retry cannot fix', () => {
    for (const message of [
      'ERR The ID specified in XADD is equal or smaller than the target stream top item',
      'NOSCRIPT No matching script',
      'WRONGTYPE Operation against a key holding the wrong kind of value',
    ]) {
      expect(isRedisUnavailable(new Error(message)), message).toBe(false);
    }
  });
});

describe('retryUnavailable', () => {
  it('calls a step that succeeds once', async () => {
    const step = failing();
    expect(await retryUnavailable(step, FAST)).toBe('done');
    expect(step.calls).toBe(1);
  });

  it('calls again while Redis is unavailable', async () => {
    const step = failing(new Error('Connection is closed.'), new Error('CLUSTERDOWN The cluster is down'));
    expect(await retryUnavailable(step, FAST)).toBe('done');
    expect(step.calls).toBe(3);
  });

  it('throws any other error at once', async () => {
    const step = failing(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'));
    await expect(retryUnavailable(step, FAST)).rejects.toThrow(/WRONGTYPE/);
    expect(step.calls).toBe(1);
  });

  it('gives up with the last error once the time is spent', async () => {
    const step = failing(...Array.from({ length: 100 }, (_, i) => new Error(`Connection is closed. (${i})`)));
    const started = Date.now();
    await expect(retryUnavailable(step, FAST)).rejects.toThrow(/Connection is closed/);
    expect(Date.now() - started).toBeLessThanOrEqual(FAST.totalMs + 50);
    // 5, 10, 20, 20, … ms apart: far fewer calls than a busy loop would make.
    expect(step.calls).toBeGreaterThan(3);
    expect(step.calls).toBeLessThan(20);
  });
});
