/** The web tier's batcher against a real BullMQ queue: requests that arrive together share a job. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { JobBatcher, jobPriority, type BatchingPolicy } from '../../../src/infra/queue/job-batcher.ts';
import { createRedisKeys, REQUEST_QUEUE } from '../../../src/infra/redis/keys.ts';
import type { JobBatch } from '../../../src/infra/queue/job.ts';
import type { RequestJob } from '../../../src/operations/index.ts';
import { deletePrefix, TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';

const prefix = `tjb${randomBytes(4).toString('hex')}`;
const keys = createRedisKeys(prefix, 2);
let redis: Redis;
let queues: Array<Queue<JobBatch>>;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  queues = [0, 1].map((shard) => new Queue<JobBatch>(REQUEST_QUEUE, { connection: redis, prefix: keys.queuePrefix(shard) }));
});

afterAll(async () => {
  await Promise.all(queues.map((queue) => queue.close()));
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

let requestNumber = 0;
function request(tenantId: string): RequestJob {
  return {
    operation: 'chat',
    requestId: `req_${++requestNumber}_${randomBytes(3).toString('hex')}`,
    tenantId,
    keyId: 'key_1',
    replyChannel: 'reply',
    requestedModel: 'm',
    candidates: ['m'],
    body: { messages: [] },
    stream: false,
    includeUsage: false,
    enqueuedAt: Date.now(),
    feature: null,
    prompt: null,
    piiFlags: [],
    idempotencyKey: null,
    budgetKeys: [],
  };
}

async function jobsOf(shard: number): Promise<Array<{ id: string; priority: number; requests: string[] }>> {
  const jobs = await queues[shard]!.getJobs(['waiting', 'prioritized']);
  return jobs.map((job) => ({ id: job.id as string, priority: job.opts.priority ?? 0, requests: job.data.requests.map((r) => r.requestId) }));
}

async function drain(): Promise<void> {
  for (const queue of queues) await queue.drain(true);
}

const noop = () => undefined;

function batcher(policy: Partial<BatchingPolicy> = {}): JobBatcher {
  return new JobBatcher(queues, keys, { fairShare: 4, maxBatch: 8, windowMs: 0, ...policy });
}

describe('JobBatcher', () => {
  it('adds a request to an idle queue at once, as a job of its own named after it', async () => {
    await drain();
    const alone = request('solo');
    const batch = await batcher().add(alone, 1, noop);
    expect(batch.jobId).toBe(alone.requestId);
    expect(await jobsOf(keys.shardOf('solo'))).toEqual([{ id: alone.requestId, priority: 0, requests: [alone.requestId] }]);
  });

  it('puts the requests of one turn together, and those that arrive while an add is on its way into the next jobs, at most maxBatch to a job, each request once', async () => {
    await drain();
    const gatherer = batcher({ maxBatch: 8 });
    const requests = Array.from({ length: 25 }, () => request('busy'));
    const batches = await Promise.all(requests.map((r) => gatherer.add(r, 1, noop)));
    const jobs = await jobsOf(keys.shardOf('busy'));
    expect(jobs.length).toBeLessThan(requests.length);
    expect(Math.max(...jobs.map((job) => job.requests.length))).toBeLessThanOrEqual(8);
    expect(jobs.flatMap((job) => job.requests).sort()).toEqual(requests.map((r) => r.requestId).sort());
    for (const [i, batch] of batches.entries()) expect(batch.requestIds).toContain(requests[i]!.requestId);
    // Added in one turn, the first maxBatch share the first job rather than the first going alone.
    expect(jobs.find((job) => job.id === requests[0]!.requestId)?.requests).toEqual(requests.slice(0, 8).map((r) => r.requestId));
  });

  it('keeps a tenant over its fair share in jobs of its own, prioritized by its earliest position', async () => {
    await drain();
    const gatherer = batcher({ windowMs: 50 });
    const shard = keys.shardOf('noisy');
    const quiet = ['quiet-a', 'quiet-b', 'quiet-c', 'quiet-d'].find((tenant) => keys.shardOf(tenant) === shard) as string;
    const noisy = [request('noisy'), request('noisy'), request('noisy')];
    const calm = request(quiet);
    await Promise.all([gatherer.add(noisy[0]!, 6, noop), gatherer.add(noisy[1]!, 5, noop), gatherer.add(calm, 1, noop), gatherer.add(noisy[2]!, 7, noop)]);
    const jobs = await jobsOf(shard);
    expect(jobs).toContainEqual({ id: calm.requestId, priority: 0, requests: [calm.requestId] });
    expect(jobs).toContainEqual({ id: noisy[0]!.requestId, priority: 5, requests: noisy.map((r) => r.requestId) });
    expect(jobPriority(4, 4)).toBeUndefined();
    expect(jobPriority(5, 4)).toBe(5);
  });

  it('with a window, the first request of an idle group waits for the others', async () => {
    await drain();
    const gatherer = batcher({ windowMs: 30 });
    const first = request('windowed');
    const pending = gatherer.add(first, 1, noop);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const second = request('windowed');
    await Promise.all([pending, gatherer.add(second, 1, noop)]);
    expect(await jobsOf(keys.shardOf('windowed'))).toEqual([{ id: first.requestId, priority: 0, requests: [first.requestId, second.requestId] }]);
  });

  it('removes a waiting job once for all its requests, and undoes every one of them once, those still waiting too', async () => {
    await drain();
    const gatherer = batcher({ windowMs: 20 });
    const [a, b, c] = [request('gone'), request('gone'), request('gone')];
    const abandoned: string[] = [];
    const undo = (id: string) => () => abandoned.push(id);
    const [batch] = await Promise.all([a, b, c].map((r) => gatherer.add(r, 1, undo(r.requestId))));
    expect(batch!.cancel(a.requestId)).toBe(false);
    expect(batch!.cancel(b.requestId)).toBe(false);
    expect(batch!.removed).toBe(false);
    expect(await Promise.all([batch!.remove(), batch!.remove()])).toEqual([true, true]);
    expect(await batch!.remove()).toBe(true);
    batch!.vanished();
    expect(batch!.removed).toBe(true);
    expect(abandoned.sort()).toEqual([a.requestId, b.requestId, c.requestId].sort());
    expect(await jobsOf(keys.shardOf('gone'))).toEqual([]);
  });
});
