/** The budget ledger against real Redis: atomic reservations, settle-once, windows, rebuilds, credit, queue cap. */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { BudgetLedger, type ReserveOutcome, type SpendSource } from '../../../src/domain/budget/budget-ledger.ts';
import { windowStart } from '../../../src/domain/budget/windows.ts';
import { createRedisKeys } from '../../../src/infra/redis/keys.ts';
import { defineScripts, type ScriptedRedis } from '../../../src/infra/redis/scripts.ts';
import type { BudgetPolicy, BudgetWindow } from '../../../src/infra/store/repository.ts';
import { deletePrefix, TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';

const prefix = `tbl${randomBytes(4).toString('hex')}`;
const keys = createRedisKeys(prefix);
const TTL_MS = 60_000;
const USD = 1_000_000;
const clients: ScriptedRedis<Redis>[] = [];
const redis = client();

function client(): ScriptedRedis<Redis> {
  const created = defineScripts(new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }));
  clients.push(created);
  return created;
}

/** Stands in for the store's usage and top-up queries; tests set what it answers. */
interface FakeSpend extends SpendSource {
  spent: (feature: string | null, since: Date, until: Date) => number | Promise<number>;
  /** The requests whose records the spent figure counts, of those a rebuild asks about. */
  stored: Set<string>;
  toppedUp: number | null;
  calls: number;
}

function fakeSpend(): FakeSpend {
  const fake: FakeSpend = {
    spent: () => 0,
    stored: new Set(),
    toppedUp: null,
    calls: 0,
    spentMicros: async (_tenantId, feature, since, until, among) => {
      fake.calls += 1;
      return { micros: await fake.spent(feature, since, until), counted: among.filter((id) => fake.stored.has(id)) };
    },
    creditToppedUp: async () => fake.toppedUp,
  };
  return fake;
}

let clock: Date;
let spend: FakeSpend;
let ledger: BudgetLedger;
let tenant: string;
let tenants = 0;
let requests = 0;

function newLedger(on: ScriptedRedis<Redis> = redis): BudgetLedger {
  return new BudgetLedger({ redis: on, keys, spend, reservationTtlMs: TTL_MS, now: () => clock });
}

function policy(id: string, window: BudgetWindow, limitMicros: number, feature: string | null = null): BudgetPolicy {
  return { id, tenantId: tenant, feature, window, limitMicros, createdAt: new Date(0) };
}

function reserve(
  estimateMicros: number,
  policies: BudgetPolicy[],
  options: { credit?: boolean; maxQueued?: number; on?: BudgetLedger; requestId?: string } = {},
) {
  requests += 1;
  const requestId = options.requestId ?? `req_${requests}`;
  return (options.on ?? ledger).reserve({
    tenantId: tenant,
    requestId,
    estimateMicros,
    policies,
    credit: options.credit ?? false,
    maxQueued: options.maxQueued ?? Infinity,
  });
}

/** Reserves and returns what settle needs; fails the test when refused. */
async function reserved(estimateMicros: number, policies: BudgetPolicy[], credit = false): Promise<{ requestId: string; keys: string[] }> {
  const requestId = `req_${++requests}`;
  const outcome = await reserve(estimateMicros, policies, { credit, requestId });
  if (!outcome.ok) throw new Error(`reservation refused: ${JSON.stringify(outcome)}`);
  return { requestId, keys: outcome.keys };
}

async function counters(p: BudgetPolicy): Promise<{ spent: number; reserved: number }> {
  const snapshot = await ledger.snapshot(tenant, [p], false);
  const budget = snapshot.budgets[0];
  return { spent: budget?.spentMicros ?? NaN, reserved: budget?.reservedMicros ?? NaN };
}

beforeEach(() => {
  clock = new Date('2025-03-10T12:00:00Z');
  spend = fakeSpend();
  ledger = newLedger();
  tenant = `tenant${++tenants}`;
});

afterEach(async () => {
  await deletePrefix(redis, prefix);
});

afterAll(async () => {
  for (const c of clients) c.disconnect();
});

describe('reserve', () => {
  it('reserves within the limit and refuses past it, naming the policy and when it resets', async () => {
    const day = policy('p-day', 'day', 1_000);
    expect(await reserve(600, [day])).toMatchObject({ ok: true, queued: 1 });
    expect(await reserve(500, [day])).toEqual({ ok: false, reason: 'budget', policy: day, resetsAt: new Date('2025-03-11T00:00:00Z') });
    expect(await reserve(400, [day])).toMatchObject({ ok: true, queued: 2 });
  });

  it('checks every window: the tightest one refuses, and nothing is reserved anywhere', async () => {
    const day = policy('p-day', 'day', 50 * USD);
    const month = policy('p-month', 'month', 1_000 * USD);
    const hour = policy('p-hour-chat', 'hour', 5 * USD, 'chat');
    expect(await reserve(6 * USD, [day, month, hour])).toMatchObject({ ok: false, reason: 'budget', policy: hour, resetsAt: new Date('2025-03-10T13:00:00Z') });
    expect((await counters(day)).reserved).toBe(0);
    expect(await reserve(4 * USD, [day, month, hour])).toMatchObject({ ok: true });

    // Earlier today the tenant spent $48 (store): the day window is now the tightest.
    const other = policy('p-day-2', 'day', 50 * USD);
    spend.spent = (_feature, since) => (since.getTime() === windowStart('day', clock).getTime() ? 48 * USD : 0);
    expect(await reserve(3 * USD, [other, month])).toMatchObject({ ok: false, reason: 'budget', policy: other });
    // Two windows exhausted: the one that resets last is named, as only then can the request pass.
    expect(await reserve(60 * USD, [hour, other, month])).toMatchObject({ reason: 'budget', policy: other, resetsAt: new Date('2025-03-11T00:00:00Z') });
  });

  it('never over-reserves under 200 concurrent requests from four processes', async () => {
    const day = policy('p-day', 'day', 50_000);
    const ledgers = [ledger, newLedger(client()), newLedger(client()), newLedger(client())];
    const hash = keys.budgetWindow(tenant, day.id, windowStart('day', clock).getTime());
    let done = false;
    let peak = 0;
    const monitor = (async () => {
      while (!done) {
        const [spent, reserved] = await redis.hmget(hash, 'spent', 'reserved');
        peak = Math.max(peak, Number(spent ?? 0) + Number(reserved ?? 0));
      }
    })();
    let outcomes: ReserveOutcome[];
    let settled: string[];
    try {
      outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => reserve(1_000, [day], { on: ledgers[i % 4], requestId: `req_c${i}` })));
      const accepted = outcomes.flatMap((o, i) => (o.ok ? [{ requestId: `req_c${i}`, keys: o.keys }] : []));
      settled = await Promise.all(accepted.map((a, i) => ledgers[i % 4]!.settle(tenant, a.requestId, a.keys, 1_000)));
    } finally {
      done = true;
      await monitor;
    }
    expect(outcomes.filter((o) => o.ok)).toHaveLength(50);
    expect(outcomes.filter((o) => !o.ok && o.reason === 'budget')).toHaveLength(150);
    expect(spend.calls).toBeLessThanOrEqual(4);
    expect(settled.every((s) => s === 'settled')).toBe(true);
    expect(await counters(day)).toEqual({ spent: 50_000, reserved: 0 });
    expect(peak).toBeLessThanOrEqual(50_000);
  });

  it('a repeated reserve of one request replaces its amount instead of adding to it', async () => {
    const day = policy('p-day', 'day', 1_000);
    await reserve(400, [day], { requestId: 'req_same' });
    expect(await reserve(700, [day], { requestId: 'req_same' })).toMatchObject({ ok: true, queued: 1 });
    expect(await counters(day)).toEqual({ spent: 0, reserved: 700 });
  });

  it('rejects amounts that are not whole micro-units', async () => {
    await expect(reserve(1.5, [])).rejects.toThrow(RangeError);
    await expect(reserve(-1, [])).rejects.toThrow(RangeError);
  });
});

describe('settle', () => {
  it('charges the actual cost exactly once', async () => {
    const day = policy('p-day', 'day', 1_000);
    const r = await reserved(300, [day]);
    expect(await ledger.settle(tenant, r.requestId, r.keys, 250)).toBe('settled');
    expect(await ledger.settle(tenant, r.requestId, r.keys, 250)).toBe('already_settled');
    expect(await counters(day)).toEqual({ spent: 250, reserved: 0 });
  });

  it('releases the reservation when the actual cost is 0', async () => {
    const day = policy('p-day', 'day', 1_000);
    const r = await reserved(1_000, [day]);
    expect(await reserve(1, [day])).toMatchObject({ ok: false, reason: 'budget' });
    expect(await ledger.settle(tenant, r.requestId, r.keys, 0)).toBe('settled');
    expect(await counters(day)).toEqual({ spent: 0, reserved: 0 });
    expect(await reserve(1_000, [day])).toMatchObject({ ok: true });
  });

  it('settlementKeys names the keys a reservation returns, so one whose reply was lost can be released', async () => {
    spend.toppedUp = 1_000;
    const input = {
      tenantId: tenant,
      requestId: 'req_lost',
      estimateMicros: 300,
      policies: [policy('p-day', 'day', 1_000), policy('p-month', 'month', 5_000)],
      credit: true,
      maxQueued: Infinity,
    };
    const outcome = await ledger.reserve(input);
    expect(outcome).toMatchObject({ ok: true, keys: ledger.settlementKeys(input) });
    expect(await ledger.settle(tenant, 'req_lost', ledger.settlementKeys(input), 0)).toBe('settled');
    expect(await counters(input.policies[0] as BudgetPolicy)).toEqual({ spent: 0, reserved: 0 });
  });

  it('refuses keys of another tenant', async () => {
    const r = await reserved(1, []);
    await expect(ledger.settle('someone-else', r.requestId, r.keys, 1)).rejects.toThrow(/not those of tenant/);
  });
});

describe('window rollover (UTC)', () => {
  async function spendAll(p: BudgetPolicy): Promise<void> {
    const r = await reserved(p.limitMicros, [p]);
    await ledger.settle(tenant, r.requestId, r.keys, p.limitMicros);
    expect(await reserve(1, [p])).toMatchObject({ ok: false, reason: 'budget' });
  }

  it('day: spent at 23:59:59, empty at 00:00:00', async () => {
    const day = policy('p-day', 'day', 1_000);
    clock = new Date('2025-03-10T23:59:59Z');
    await spendAll(day);
    clock = new Date('2025-03-11T00:00:00Z');
    expect(await reserve(1_000, [day])).toMatchObject({ ok: true });
  });

  it('hour: spent at 12:59:59.999, empty at 13:00', async () => {
    const hour = policy('p-hour', 'hour', 1_000);
    clock = new Date('2025-03-10T12:59:59.999Z');
    await spendAll(hour);
    clock = new Date('2025-03-10T13:00:00Z');
    expect(await reserve(1_000, [hour])).toMatchObject({ ok: true });
  });

  it('month: spent on December 31, empty on January 1', async () => {
    const month = policy('p-month', 'month', 1_000);
    clock = new Date('2025-12-31T23:59:59Z');
    await spendAll(month);
    expect(await reserve(1, [month])).toMatchObject({ resetsAt: new Date('2026-01-01T00:00:00Z') });
    clock = new Date('2026-01-01T00:00:00Z');
    expect(await reserve(1_000, [month])).toMatchObject({ ok: true });
  });

  it('a window expires from Redis a day after it ends', async () => {
    const hour = policy('p-hour', 'hour', 1_000);
    await reserved(1, [hour]);
    const hash = keys.budgetWindow(tenant, hour.id, windowStart('hour', clock).getTime());
    // Window end (13:00) + one day, from the injected clock's 12:00.
    expect(await redis.pttl(hash)).toBeGreaterThan(25 * 3_600_000 - 5_000);
    expect(await redis.pttl(hash)).toBeLessThanOrEqual(25 * 3_600_000);
  });
});

describe('losing Redis', () => {
  it('rebuilds a flushed window from the store, so the budget still holds', async () => {
    const day = policy('p-day', 'day', 10_000);
    const r = await reserved(4_000, [day]);
    await ledger.settle(tenant, r.requestId, r.keys, 4_000);
    await deletePrefix(redis, prefix);
    spend.spent = (feature, since, until) => {
      expect({ feature, since, until }).toEqual({ feature: null, since: new Date('2025-03-10T00:00:00Z'), until: new Date('2025-03-11T00:00:00Z') });
      return 4_000;
    };
    expect(await reserve(7_000, [day])).toMatchObject({ ok: false, reason: 'budget' });
    expect(await reserve(6_000, [day])).toMatchObject({ ok: true });
    expect(await counters(day)).toEqual({ spent: 4_000, reserved: 6_000 });
  });

  it('a settle after the flush does not recreate the window from its one cost, and the rebuild counts it once when the store does', async () => {
    const day = policy('p-day', 'day', 10_000);
    const r = await reserved(4_000, [day]);
    await deletePrefix(redis, prefix);
    expect(await ledger.settle(tenant, r.requestId, r.keys, 4_000)).toBe('settled');
    expect(await redis.hget(r.keys[1]!, 'spent')).toBeNull();
    // The store holds this request's record by the rebuild: its figure counts it.
    spend.spent = () => 9_000;
    spend.stored.add(r.requestId);
    expect(await counters(day)).toEqual({ spent: 9_000, reserved: 0 });
    expect(await redis.hkeys(r.keys[1]!)).toEqual(expect.not.arrayContaining([`u:${r.requestId}`]));
  });

  it('a request settled after the flush whose record is still in the outbox is added to the rebuilt window and credit', async () => {
    const day = policy('p-day', 'day', 10_000);
    spend.toppedUp = 20_000;
    const [a, b] = [await reserved(4_000, [day], true), await reserved(1_000, [day], true)];
    await deletePrefix(redis, prefix);
    await ledger.settle(tenant, a.requestId, a.keys, 3_500);
    await ledger.settle(tenant, b.requestId, b.keys, 700);
    // The store has b's record already, and counts it in its figure; a's waits in the outbox.
    spend.spent = () => 2_700;
    spend.stored.add(b.requestId);
    expect(await counters(day)).toEqual({ spent: 2_700 + 3_500, reserved: 0 });
    expect((await ledger.snapshot(tenant, [], true)).credit).toEqual({ balanceMicros: 20_000 - 2_700 - 3_500, reservedMicros: 0 });
    expect(await reserve(10_000 - 6_200 + 1, [day])).toMatchObject({ ok: false, reason: 'budget' });
  });

  it('reads the store again when a request settles into the lost counter while it is rebuilt', async () => {
    const day = policy('p-day', 'day', 10_000);
    const [a, c] = [await reserved(1_000, [day]), await reserved(1_000, [day])];
    await deletePrefix(redis, prefix);
    await ledger.settle(tenant, a.requestId, a.keys, 600);
    spend.calls = 0;
    let settledDuringRead = false;
    spend.spent = async () => {
      // c settles between the rebuild's reading of the counter's requests and its writing of the counter.
      if (!settledDuringRead) {
        settledDuringRead = true;
        await ledger.settle(tenant, c.requestId, c.keys, 800);
      }
      return 5_000;
    };
    expect(await counters(day)).toEqual({ spent: 5_000 + 600 + 800, reserved: 0 });
    expect(spend.calls).toBe(2);
  });

  it('rebuilds the credit balance as top-ups minus all spend', async () => {
    spend.toppedUp = 10_000;
    spend.spent = (feature, since) => (feature === null && since.getTime() === 0 ? 3_000 : -1);
    expect((await ledger.snapshot(tenant, [], true)).credit).toEqual({ balanceMicros: 7_000, reservedMicros: 0 });
    expect(await reserve(7_001, [], { credit: true })).toEqual({ ok: false, reason: 'credit', balanceMicros: 7_000 });
  });
});

describe('credit', () => {
  it('reserves against the balance, topUp raises it, settle lowers it', async () => {
    spend.toppedUp = 5_000;
    const first = await reserved(3_000, [], true);
    expect(await reserve(3_000, [], { credit: true })).toEqual({ ok: false, reason: 'credit', balanceMicros: 2_000 });
    await ledger.topUp(tenant, 7_000, 2_000);
    expect(await reserve(3_000, [], { credit: true })).toMatchObject({ ok: true });
    await ledger.settle(tenant, first.requestId, first.keys, 2_500);
    expect((await ledger.snapshot(tenant, [], true)).credit).toEqual({ balanceMicros: 4_500, reservedMicros: 3_000 });
  });

  it('a tenant without credit enforcement is not checked, and topUp creates no counter', async () => {
    expect(await reserve(1_000_000 * USD, [], { credit: false })).toMatchObject({ ok: true });
    await ledger.topUp(tenant, 5_000, 5_000);
    expect(await redis.exists(keys.credit(tenant))).toBe(0);
    expect((await ledger.snapshot(tenant, [], false)).credit).toBeNull();
  });

  it("raises the balance to the store's top-ups once, however often and in whatever order their calls come", async () => {
    spend.toppedUp = 5_000;
    const balance = async () => (await ledger.snapshot(tenant, [], true)).credit?.balanceMicros;
    expect(await balance()).toBe(5_000);
    // A top-up of 2,000 sent twice: both calls read the store's sum after the one insert.
    await Promise.all([ledger.topUp(tenant, 7_000, 2_000), ledger.topUp(tenant, 7_000, 2_000)]);
    expect(await balance()).toBe(7_000);
    // Two top-ups of 1,000: the second's call read both rows and arrives first, the first's arrives late.
    await ledger.topUp(tenant, 9_000, 1_000);
    await ledger.topUp(tenant, 8_000, 1_000);
    expect(await balance()).toBe(9_000);
    // A counter rebuilt before it kept its top-ups' sum is raised by the amount, once, then kept exact.
    await redis.hdel(keys.credit(tenant), 'topped_up');
    await ledger.topUp(tenant, 10_000, 1_000);
    await ledger.topUp(tenant, 10_000, 1_000);
    expect(await balance()).toBe(10_000);
  });

  it('credit enforced with no account in the store means a zero balance', async () => {
    expect(await reserve(1, [], { credit: true })).toEqual({ ok: false, reason: 'credit', balanceMicros: 0 });
    expect(await reserve(0, [], { credit: true })).toMatchObject({ ok: true });
  });
});

describe('expired reservations', () => {
  it('are reaped by a later reserve; a late settle still charges the cost', async () => {
    const day = policy('p-day', 'day', 1_000);
    spend.toppedUp = 1_000;
    const stale = await reserved(1_000, [day], true);
    expect(await reserve(1, [day], { credit: true })).toMatchObject({ ok: false, reason: 'budget' });
    clock = new Date(clock.getTime() + TTL_MS + 1);
    expect(await reserve(600, [day], { credit: true })).toMatchObject({ ok: true, queued: 1 });
    expect(await counters(day)).toEqual({ spent: 0, reserved: 600 });
    expect(await ledger.settle(tenant, stale.requestId, stale.keys, 400)).toBe('settled');
    expect(await counters(day)).toEqual({ spent: 400, reserved: 600 });
    expect((await ledger.snapshot(tenant, [], true)).credit).toEqual({ balanceMicros: 600, reservedMicros: 600 });
  });
});

describe('queue cap', () => {
  it('refuses the fourth concurrent reservation at maxQueued 3; settle frees a place', async () => {
    const outcomes = await Promise.all([1, 2, 3, 4].map((i) => reserve(10, [], { maxQueued: 3, requestId: `req_q${i}` })));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
    expect(outcomes.filter((o) => !o.ok)).toEqual([{ ok: false, reason: 'queue_full', queued: 3 }]);
    const index = outcomes.findIndex((o) => o.ok);
    const first = outcomes[index];
    if (!first?.ok) throw new Error('no reservation');
    await ledger.settle(tenant, `req_q${index + 1}`, first.keys, 10);
    expect(await reserve(10, [], { maxQueued: 3 })).toMatchObject({ ok: true, queued: 3 });
  });

  it('expired reservations no longer hold a place', async () => {
    await reserve(10, [], { maxQueued: 1 });
    expect(await reserve(10, [], { maxQueued: 1 })).toMatchObject({ reason: 'queue_full' });
    clock = new Date(clock.getTime() + TTL_MS);
    expect(await reserve(10, [], { maxQueued: 1 })).toMatchObject({ ok: true, queued: 1 });
  });
});

describe('snapshot', () => {
  it('reports spent, reserved, remaining and resets_at per policy, and the credit account', async () => {
    const day = policy('p-day', 'day', 10_000);
    const hour = policy('p-hour-chat', 'hour', 2_000, 'chat');
    spend.toppedUp = 50_000;
    const a = await reserved(1_500, [day, hour], true);
    await reserved(300, [day], true);
    await ledger.settle(tenant, a.requestId, a.keys, 1_200);
    const snapshot = await ledger.snapshot(tenant, [day, hour], true);
    expect(snapshot).toEqual({
      budgets: [
        { policy: day, spentMicros: 1_200, reservedMicros: 300, remainingMicros: 8_500, resetsAt: new Date('2025-03-11T00:00:00Z') },
        { policy: hour, spentMicros: 1_200, reservedMicros: 0, remainingMicros: 800, resetsAt: new Date('2025-03-10T13:00:00Z') },
      ],
      credit: { balanceMicros: 48_800, reservedMicros: 300 },
    });
  });

  it('remaining never goes below zero when a cost exceeded its estimate', async () => {
    const day = policy('p-day', 'day', 1_000);
    const r = await reserved(900, [day]);
    await ledger.settle(tenant, r.requestId, r.keys, 1_500);
    expect((await ledger.snapshot(tenant, [day], false)).budgets[0]).toMatchObject({ spentMicros: 1_500, remainingMicros: 0 });
  });
});
