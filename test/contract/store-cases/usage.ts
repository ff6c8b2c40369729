/** Contract cases of UsageRepository. */
import { expect, it } from 'vitest';
import type { UsageCursor, UsageFilter, UsageRecord } from '../../../src/infra/store/repository.ts';
import { uid, type StoreContext } from './context.ts';

const DAY_MS = 86_400_000;
/** Midnight UTC of the days the records fall on. */
const DAY_1 = Date.UTC(2025, 2, 10);
const DAY_2 = DAY_1 + DAY_MS;

/** A complete record with every optional field set; `overrides` picks the interesting ones. */
function usageRecord(tenantId: string, overrides: Partial<UsageRecord> = {}): UsageRecord {
  return {
    requestId: `req_${uid()}${uid()}`,
    tenantId,
    keyId: 'key_a',
    feature: 'chat',
    operation: 'embeddings',
    requestedModel: 'fast',
    model: 'fast',
    provider: 'simulator',
    upstreamModel: 'sim-fast-1',
    promptName: 'welcome',
    promptVersion: 3,
    promptTokens: 100,
    completionTokens: 20,
    totalTokens: 120,
    cachedTokens: 64,
    cacheWriteTokens: 16,
    reasoningTokens: 8,
    usageSource: 'provider',
    costMicros: 4_000_000_123,
    status: 'succeeded',
    errorCode: null,
    queueWaitMs: 4,
    ttftMs: 35,
    latencyMs: 410,
    stream: true,
    piiFlags: ['email', 'phone'],
    responseId: `resp_${uid()}`,
    batchId: `batch_${uid()}`,
    customId: `line-${uid()}`,
    deployment: 'fast-east',
    cacheHit: true,
    createdAt: new Date(DAY_1 + 3_600_000),
    ...overrides,
  };
}

const ids = (records: UsageRecord[]) => records.map((r) => r.requestId);

/** The expected order of `list`: newest first, ties by request id descending. */
function newestFirst(records: UsageRecord[]): UsageRecord[] {
  return [...records].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.requestId < b.requestId ? 1 : -1));
}

/** Registers the usage cases against `store`. */
export function usageCases(store: StoreContext): void {
  const wholeRange = (tenantId: string): UsageFilter => ({ tenantId, since: new Date(DAY_1 - DAY_MS), until: new Date(DAY_2 + 2 * DAY_MS) });

  it('round-trips a record exactly, nulls and all', async () => {
    const tenantId = `t-${uid()}`;
    const full = usageRecord(tenantId);
    const sparse = usageRecord(tenantId, {
      feature: null,
      promptName: null,
      promptVersion: null,
      ttftMs: null,
      errorCode: 'upstream_error',
      status: 'failed',
      usageSource: 'estimated',
      stream: false,
      piiFlags: [],
      responseId: null,
      batchId: null,
      customId: null,
      deployment: null,
      cacheHit: false,
      createdAt: new Date(DAY_1 + 1_234),
    });
    expect(await store.repo().usage.insertMany([full, sparse])).toBe(2);
    expect(await store.repo().usage.list(wholeRange(tenantId), 10, null)).toEqual([full, sparse]);
  });

  it('inserts only new request ids: a batch with duplicates stores the rest', async () => {
    const tenantId = `t-${uid()}`;
    const [r1, r2, r3, r4] = Array.from({ length: 4 }, (_, i) => usageRecord(tenantId, { createdAt: new Date(DAY_1 + i * 1000) }));
    if (!r1 || !r2 || !r3 || !r4) throw new Error('records not built');
    expect(await store.repo().usage.insertMany([])).toBe(0);
    expect(await store.repo().usage.insertMany([r1, r2])).toBe(2);
    expect(await store.repo().usage.insertMany([r3, r2, r4])).toBe(2);
    expect(await store.repo().usage.insertMany([r1, r2, r3, r4])).toBe(0);
    const r5 = usageRecord(tenantId, { createdAt: new Date(DAY_1 + 9000) });
    expect(await store.repo().usage.insertMany([r5, { ...r5, totalTokens: 1 }])).toBe(1);
    expect(ids(await store.repo().usage.list(wholeRange(tenantId), 10, null))).toEqual(ids([r5, r4, r3, r2, r1]));
  });

  it('lists newest first, ties by request id, since inclusive and until exclusive', async () => {
    const tenantId = `t-${uid()}`;
    const at = (ms: number) => new Date(DAY_1 + ms);
    const records = [0, 0, 0, 5, 5, 10, 20].map((ms) => usageRecord(tenantId, { createdAt: at(ms) }));
    await store.repo().usage.insertMany(records);
    const listed = await store.repo().usage.list({ tenantId, since: at(0), until: at(20) }, 100, null);
    expect(ids(listed)).toEqual(ids(newestFirst(records.filter((r) => r.createdAt < at(20)))));
    expect(ids(await store.repo().usage.list({ tenantId, since: at(5), until: at(10) }, 100, null))).toHaveLength(2);
    expect(await store.repo().usage.list({ tenantId, since: at(0), until: at(20) }, 2, null)).toEqual(listed.slice(0, 2));
  });

  it('filters by model (the alias that answered), feature and key', async () => {
    const tenantId = `t-${uid()}`;
    const smart = usageRecord(tenantId, { requestedModel: 'fast', model: 'smart', feature: 'search', keyId: 'key_b' });
    const fast = usageRecord(tenantId, { feature: null });
    const other = usageRecord(tenantId, { model: 'smart', keyId: 'key_b' });
    await store.repo().usage.insertMany([smart, fast, other]);
    const range = wholeRange(tenantId);
    const list = (filter: Partial<UsageFilter>) =>
      store
        .repo()
        .usage.list({ ...range, ...filter }, 10, null)
        .then((r) => ids(r).sort());
    expect(await list({ model: 'smart' })).toEqual(ids([smart, other]).sort());
    expect(await list({ model: 'fast' })).toEqual([fast.requestId]);
    expect(await list({ feature: 'search' })).toEqual([smart.requestId]);
    expect(await list({ keyId: 'key_b', feature: 'chat' })).toEqual([other.requestId]);
    expect(await list({ model: 'none' })).toEqual([]);
  });

  it('pages with the cursor through every record exactly once, ties included', async () => {
    const tenantId = `t-${uid()}`;
    const records = Array.from({ length: 25 }, (_, i) => usageRecord(tenantId, { createdAt: new Date(DAY_1 + Math.floor(i / 4) * 1000) }));
    await store.repo().usage.insertMany(records);
    const seen: UsageRecord[] = [];
    let cursor: UsageCursor | null = null;
    for (let page = 0; page < 10; page++) {
      const batch: UsageRecord[] = await store.repo().usage.list(wholeRange(tenantId), 7, cursor);
      seen.push(...batch);
      const last = batch.at(-1);
      if (!last) break;
      cursor = { createdAt: last.createdAt, requestId: last.requestId };
    }
    expect(ids(seen)).toEqual(ids(newestFirst(records)));
  });

  it('sums per UTC day, model and feature, ordered by key with the null feature first', async () => {
    const tenantId = `t-${uid()}`;
    const lateDay1 = new Date(DAY_2 - 1);
    await store.repo().usage.insertMany([
      usageRecord(tenantId, { model: 'smart', feature: 'search', promptTokens: 1, completionTokens: 2, totalTokens: 3, costMicros: 10, createdAt: lateDay1 }),
      usageRecord(tenantId, {
        model: 'fast',
        feature: null,
        promptTokens: 10,
        completionTokens: 20,
        totalTokens: 30,
        costMicros: 100,
        createdAt: new Date(DAY_2),
      }),
      usageRecord(tenantId, {
        model: 'fast',
        feature: 'chat',
        promptTokens: 100,
        completionTokens: 200,
        totalTokens: 300,
        costMicros: 9_000_000_000_000,
        createdAt: new Date(DAY_2 + 5),
      }),
    ]);
    const group = (key: string | null, requests: number, p: number, c: number, t: number, cost: number) => ({
      key,
      requests,
      promptTokens: p,
      completionTokens: c,
      totalTokens: t,
      costMicros: cost,
    });
    const range = wholeRange(tenantId);
    expect(await store.repo().usage.sum(range, 'day')).toEqual([group('2025-03-10', 1, 1, 2, 3, 10), group('2025-03-11', 2, 110, 220, 330, 9_000_000_000_100)]);
    expect(await store.repo().usage.sum(range, 'model')).toEqual([group('fast', 2, 110, 220, 330, 9_000_000_000_100), group('smart', 1, 1, 2, 3, 10)]);
    expect(await store.repo().usage.sum(range, 'feature')).toEqual([
      group(null, 1, 10, 20, 30, 100),
      group('chat', 1, 100, 200, 300, 9_000_000_000_000),
      group('search', 1, 1, 2, 3, 10),
    ]);
    expect(await store.repo().usage.sum({ ...range, model: 'fast', since: new Date(DAY_2) }, 'feature')).toHaveLength(2);
    expect(await store.repo().usage.sum({ ...range, model: 'none' }, 'day')).toEqual([]);
  });

  it("finds each key's newest record, never another tenant's", async () => {
    const [a, b] = [`t-${uid()}`, `t-${uid()}`];
    await store
      .repo()
      .usage.insertMany([
        usageRecord(a, { keyId: 'key_1', createdAt: new Date(DAY_1) }),
        usageRecord(a, { keyId: 'key_1', createdAt: new Date(DAY_2) }),
        usageRecord(a, { keyId: 'key_2', createdAt: new Date(DAY_1 + 5) }),
        usageRecord(b, { keyId: 'key_3', createdAt: new Date(DAY_2) }),
      ]);
    const lastUsed = await store.repo().usage.lastUsed(a, ['key_1', 'key_2', 'key_3', 'key_4']);
    expect([...lastUsed].sort()).toEqual([
      ['key_1', new Date(DAY_2)],
      ['key_2', new Date(DAY_1 + 5)],
    ]);
    expect(await store.repo().usage.lastUsed(a, [])).toEqual(new Map());
  });

  it("never lists or sums another tenant's records", async () => {
    const [a, b] = [`t-${uid()}`, `t-${uid()}`];
    const mine = usageRecord(a);
    await store.repo().usage.insertMany([mine, usageRecord(b), usageRecord(b)]);
    expect(ids(await store.repo().usage.list(wholeRange(a), 10, null))).toEqual([mine.requestId]);
    expect((await store.repo().usage.sum(wholeRange(a), 'model')).map((g) => g.requests)).toEqual([1]);
    expect(await store.repo().usage.list(wholeRange(`t-${uid()}`), 10, null)).toEqual([]);
  });
}
