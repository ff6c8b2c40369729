/** finish-request-n.lua against real Redis: a call repeated after a lost reply, or after a failed chunk batch, changes nothing twice. */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { BudgetLedger } from '../../../src/domain/budget/budget-ledger.ts';
import { createRedisKeys } from '../../../src/infra/redis/keys.ts';
import { defineScripts, finishRequest, LOST_MARKER, type EventLine, type InlineEnding, type StateEnding } from '../../../src/infra/redis/scripts.ts';
import { once } from 'node:events';
import type { BudgetPolicy } from '../../../src/infra/store/repository.ts';
import { deletePrefix, TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';

const prefix = `tfr${randomBytes(4).toString('hex')}`;
const keys = createRedisKeys(prefix);
const redis = defineScripts(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }));
const ledger = new BudgetLedger({
  redis,
  keys,
  spend: { spentMicros: async () => ({ micros: 0, counted: [] }), creditToppedUp: async () => null },
  reservationTtlMs: 60_000,
});
const tenant = 'acme';
const day: BudgetPolicy = { id: 'p-day', tenantId: tenant, feature: null, window: 'day', limitMicros: 1_000_000, createdAt: new Date(0) };
let requestId: string;
let requests = 0;

const events = (...seqs: number[]): EventLine[] => seqs.map((seq) => ({ seq, line: `chunk {"n":${seq}}` }));

async function finishWithState(budgetKeys: string[], lines: EventLine[], inline: InlineEnding | null, state: StateEnding | null) {
  return finishRequest(redis, {
    streamKey: keys.events(tenant, requestId),
    ttlMs: 60_000,
    events: lines,
    settlement: ledger.settlement(tenant, requestId, budgetKeys, 300),
    claim: null,
    inline,
    state,
    asLost: false,
  });
}

async function finish(budgetKeys: string[], lines: EventLine[], inline: InlineEnding | null = null): Promise<boolean> {
  return (await finishWithState(budgetKeys, lines, inline, null)).settled;
}

async function streamSeqs(): Promise<number[]> {
  return (await redis.xrange(keys.events(tenant, requestId), '-', '+')).map(([id]) => Number(id.slice(2)));
}

async function reservedKeys(): Promise<string[]> {
  const outcome = await ledger.reserve({ tenantId: tenant, requestId, estimateMicros: 500, policies: [day], credit: false, maxQueued: Infinity });
  if (!outcome.ok) throw new Error(`reservation refused: ${JSON.stringify(outcome)}`);
  return outcome.keys;
}

beforeEach(() => {
  requestId = `req_${++requests}`;
});

afterEach(async () => {
  await deletePrefix(redis, prefix);
});

afterAll(() => {
  redis.disconnect();
});

describe('finishRequest', () => {
  it('appends, settles once and reports it; the same call again appends and charges nothing', async () => {
    const budgetKeys = await reservedKeys();
    expect(await finish(budgetKeys, events(1, 2, 3))).toBe(true);
    expect(await finish(budgetKeys, events(1, 2, 3))).toBe(false);
    expect(await streamSeqs()).toEqual([1, 2, 3]);
    const snapshot = await ledger.snapshot(tenant, [day], false);
    expect(snapshot.budgets[0]).toMatchObject({ spentMicros: 300, reservedMicros: 0 });
    expect(await redis.zcard(keys.outstanding(tenant))).toBe(0);
  });

  it('adds only the events the stream lacks when earlier ones are already there', async () => {
    const budgetKeys = await reservedKeys();
    await redis.xadd(keys.events(tenant, requestId), '0-1', 'e', 'chunk {"n":1}');
    expect(await finish(budgetKeys, events(1, 2, 3, 4))).toBe(true);
    expect(await streamSeqs()).toEqual([1, 2, 3, 4]);
  });

  it('still fails on any other error of XADD', async () => {
    const budgetKeys = await reservedKeys();
    await redis.set(keys.events(tenant, requestId), 'not a stream');
    await expect(finish(budgetKeys, events(1))).rejects.toThrow(/WRONGTYPE/);
  });

  it('on one Redis, queues the usage record first and publishes the reply last, in the same call', async () => {
    const budgetKeys = await reservedKeys();
    const subscriber = new Redis(TEST_REDIS_URL);
    const channel = `${prefix}:reply:test`;
    await subscriber.ssubscribe(channel);
    const heard = once(subscriber, 'smessage');
    const record = `{"kind":"usage","requestId":"${requestId}"}`;
    const outbox = { key: keys.outboxItems(0), records: [record] };
    expect(await finish(budgetKeys, events(1), { outbox, reply: { channel, message: `${requestId}\n1 result {}` } })).toBe(true);
    const [, message] = (await heard) as [string, string];
    expect(message).toBe(`${requestId}\n1 result {}`);
    expect(await redis.lrange(outbox.key, 0, -1)).toEqual([record]);
    expect((await ledger.snapshot(tenant, [day], false)).budgets[0]).toMatchObject({ spentMicros: 300 });
    // A repeat after a lost reply queues the record again (the store keeps one per request id) and charges nothing.
    expect(await finish(budgetKeys, events(1), { outbox, reply: { channel, message: `${requestId}\n1 result {}` } })).toBe(false);
    expect((await ledger.snapshot(tenant, [day], false)).budgets[0]).toMatchObject({ spentMicros: 300 });
    subscriber.disconnect();
  });

  it('writes nothing of a request the web answered as lost, then ends it as lost without charging it', async () => {
    const budgetKeys = await reservedKeys();
    // The web's side: only a request that has not settled is marked (SET NX on its settled marker).
    expect(await redis.set(keys.settled(tenant, requestId), LOST_MARKER, 'PX', 60_000, 'NX')).toBe('OK');
    const outbox = { key: keys.outboxItems(0), records: ['{"kind":"usage","status":"succeeded","costMicros":300}'] };
    const inline = { outbox, reply: { channel: `${prefix}:reply:none`, message: '' } };
    const run = (asLost: boolean, records: string[], cost: number) =>
      finishRequest(redis, {
        streamKey: keys.events(tenant, requestId),
        ttlMs: 60_000,
        events: events(1),
        settlement: ledger.settlement(tenant, requestId, budgetKeys, cost),
        claim: null,
        inline: { ...inline, outbox: { ...outbox, records } },
        state: null,
        asLost,
      });
    expect(await run(false, outbox.records, 300)).toEqual({ settled: false, stateWritten: false, lost: true });
    expect(await redis.llen(outbox.key)).toBe(0);
    expect(await streamSeqs()).toEqual([]);
    const lostRecord = '{"kind":"usage","status":"failed","costMicros":0}';
    expect(await run(true, [lostRecord], 0)).toEqual({ settled: true, stateWritten: false, lost: false });
    expect(await redis.lrange(outbox.key, 0, -1)).toEqual([lostRecord]);
    expect(await streamSeqs()).toEqual([1]);
    // Its reservation is freed and nothing charged, even by a settlement that names a cost.
    expect((await ledger.snapshot(tenant, [day], false)).budgets[0]).toMatchObject({ spentMicros: 0, reservedMicros: 0 });
    expect(await redis.get(keys.settled(tenant, requestId))).toBe(LOST_MARKER);
  });

  it("a request marked lost is settled at no cost by the web's give-back, and stays lost for its worker", async () => {
    const budgetKeys = await reservedKeys();
    await redis.set(keys.settled(tenant, requestId), LOST_MARKER, 'PX', 60_000, 'NX');
    await ledger.settle(tenant, requestId, budgetKeys, 0);
    expect((await ledger.snapshot(tenant, [day], false)).budgets[0]).toMatchObject({ spentMicros: 0, reservedMicros: 0 });
    const outbox = { key: keys.outboxItems(0), records: ['{"kind":"usage","status":"succeeded","costMicros":300}'] };
    const ended = await finishRequest(redis, {
      streamKey: keys.events(tenant, requestId),
      ttlMs: 60_000,
      events: events(1),
      settlement: ledger.settlement(tenant, requestId, budgetKeys, 300),
      claim: null,
      inline: { outbox, reply: { channel: `${prefix}:reply:none`, message: '' } },
      state: null,
      asLost: false,
    });
    expect(ended.lost).toBe(true);
    expect(await redis.llen(outbox.key)).toBe(0);
    expect((await ledger.snapshot(tenant, [day], false)).budgets[0]).toMatchObject({ spentMicros: 0, reservedMicros: 0 });
  });

  it("writes a kept response's state and the records that go with it, but never over a final one", async () => {
    const budgetKeys = await reservedKeys();
    const stateKey = keys.response(tenant, `resp_${requestId}`);
    const outbox = { key: keys.outboxItems(0), records: ['usage'] };
    const inline = { outbox, reply: { channel: `${prefix}:reply:none`, message: '' } };
    const ending = (status: string, mustExist = true): StateEnding => ({
      key: stateKey,
      ttlMs: 5_000,
      fields: [
        ['status', status],
        ['body', `{"status":"${status}"}`],
      ],
      mustExist,
      records: [`response ${status}`, `event ${status}`],
    });
    await redis.hset(stateKey, 'status', 'in_progress', 'stream', '1');
    expect(await finishWithState(budgetKeys, events(1), inline, ending('completed'))).toEqual({ settled: true, stateWritten: true, lost: false });
    expect(await redis.hgetall(stateKey)).toEqual({ status: 'completed', body: '{"status":"completed"}', stream: '1' });
    expect(await redis.pttl(stateKey)).toBeGreaterThan(4_000);
    // Taken from the right: the usage record first, then the response, then its event.
    expect(await redis.lrange(outbox.key, 0, -1)).toEqual(['event completed', 'response completed', 'usage']);
    // Cancelled meanwhile: it stays so, and neither the response nor its event is queued again.
    await redis.hset(stateKey, 'status', 'cancelled');
    expect(await finishWithState(budgetKeys, events(1), inline, ending('failed'))).toEqual({ settled: false, stateWritten: false, lost: false });
    expect(await redis.hget(stateKey, 'status')).toBe('cancelled');
    expect(await redis.lrange(outbox.key, 0, 2)).toEqual(['usage', 'event completed', 'response completed']);
  });

  it('a call repeated after a lost reply finds its own end and says it wrote it, so that its records are pushed (on a cluster, by the caller)', async () => {
    const budgetKeys = await reservedKeys();
    const stateKey = keys.response(tenant, `resp_${requestId}`);
    const ending: StateEnding = {
      key: stateKey,
      ttlMs: 5_000,
      fields: [
        ['status', 'completed'],
        ['request', requestId],
      ],
      mustExist: true,
      records: ['response'],
    };
    await redis.hset(stateKey, 'status', 'in_progress', 'request', requestId);
    expect(await finishWithState(budgetKeys, events(1), null, ending)).toEqual({ settled: true, stateWritten: true, lost: false });
    expect(await finishWithState(budgetKeys, events(1), null, ending)).toEqual({ settled: false, stateWritten: true, lost: false });
    // Another request's end, or another status, is not this one's.
    const other: StateEnding = {
      ...ending,
      fields: [
        ['status', 'failed'],
        ['request', requestId],
      ],
    };
    expect(await finishWithState(budgetKeys, events(1), null, other)).toEqual({ settled: false, stateWritten: false, lost: false });
  });

  it("writes no state of a background response whose state Redis lost, but a stored one's it makes", async () => {
    const budgetKeys = await reservedKeys();
    const stateKey = keys.response(tenant, `resp_${requestId}`);
    const outbox = { key: keys.outboxItems(0), records: ['usage'] };
    const inline = { outbox, reply: { channel: `${prefix}:reply:none`, message: '' } };
    const ending = (mustExist: boolean): StateEnding => ({ key: stateKey, ttlMs: 5_000, fields: [['status', 'completed']], mustExist, records: ['response'] });
    expect(await finishWithState(budgetKeys, events(1), inline, ending(true))).toEqual({ settled: true, stateWritten: false, lost: false });
    expect(await redis.exists(stateKey)).toBe(0);
    expect(await redis.lrange(outbox.key, 0, -1)).toEqual(['usage']);
    expect(await finishWithState(budgetKeys, events(1), inline, ending(false))).toEqual({ settled: false, stateWritten: true, lost: false });
    expect(await redis.hget(stateKey, 'status')).toBe('completed');
    expect(await redis.lrange(outbox.key, 0, -1)).toEqual(['response', 'usage', 'usage']);
  });
});

describe('the settled marker', () => {
  const markerTtl = async (budgetKeys: string[], uncountedMarkerTtlMs: number) => {
    const settlement = ledger.settlement(tenant, requestId, budgetKeys, 300, uncountedMarkerTtlMs);
    await finishRequest(redis, {
      streamKey: keys.events(tenant, requestId),
      ttlMs: 60_000,
      events: events(1),
      settlement,
      claim: null,
      inline: null,
      state: null,
      asLost: false,
    });
    return redis.pttl(keys.settled(tenant, requestId));
  };

  it('guards budget counters against a second charge for a day', async () => {
    expect(await markerTtl(await reservedKeys(), 60_000)).toBeGreaterThan(23 * 3_600_000);
  });

  it('of a reservation in the queue alone, with nothing to charge twice, lives as long as the events that tell a re-run it ended', async () => {
    await redis.zadd(keys.outstanding(tenant), Date.now() + 60_000, requestId);
    const ttl = await markerTtl([keys.outstanding(tenant)], 60_000);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await redis.zcard(keys.outstanding(tenant))).toBe(0);
  });
});
