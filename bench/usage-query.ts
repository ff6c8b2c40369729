/**
 * Usage queries on PostgreSQL at scale: loads 1,000,000 records of one tenant (plus 200,000 of nine
 * others) over 30 days into a fresh database through UsageRepository.insertMany, then times the
 * queries of the usage API through the repository and EXPLAINs the one-day page.
 * Run: node_modules/.bin/node bench/usage-query.ts   (figures: docs/usage-query-benchmark.md)
 */
import { randomBytes } from 'node:crypto';
import { Client, escapeIdentifier } from 'pg';
import { ulid } from 'ulid';
import { createPostgresRepository } from '../src/infra/store/postgres/adapter.ts';
import { usageListQuery, usageSumQuery } from '../src/infra/store/postgres/usage.ts';
import type { Repository, UsageCursor, UsageFilter, UsageRecord } from '../src/infra/store/repository.ts';

const BASE_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const MAIN_TENANT = 'bench-main';
const MAIN_RECORDS = 1_000_000;
const OTHER_TENANTS = 9;
const OTHER_RECORDS = 200_000;
const MAIN_SHARE = MAIN_RECORDS / (MAIN_RECORDS + OTHER_RECORDS);
const BATCH = 5_000;
const PARALLEL_BATCHES = 2;
const DAY_MS = 86_400_000;
const DAYS = 30;
const END = Date.UTC(2025, 5, 1);
const START = END - DAYS * DAY_MS;

/** Seeded, so every run loads the same data (mulberry32). */
function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const random = prng(42);
const pick = <T>(weighted: Array<[T, number]>): T => {
  let r = random();
  for (const [value, weight] of weighted) if ((r -= weight) < 0) return value;
  return (weighted.at(-1) as [T, number])[0];
};
const MODELS: Array<[string, number]> = [
  ['fast', 0.5],
  ['smart', 0.25],
  ['mini', 0.15],
  ['vision', 0.07],
  ['reasoning', 0.03],
];
const FEATURES: Array<[string | null, number]> = [
  ['chat', 0.4],
  ['search', 0.25],
  ['summarize', 0.15],
  [null, 0.2],
];

/** A record at a random time of [from, from + spanMs), for the main tenant or one of the others. */
function usageRecord(from: number, spanMs: number): UsageRecord {
  const createdAt = new Date(from + Math.floor(random() * spanMs));
  const tenantId = random() < MAIN_SHARE ? MAIN_TENANT : `bench-other-${Math.floor(random() * OTHER_TENANTS)}`;
  const model = pick(MODELS);
  const promptTokens = 50 + Math.floor(random() * 2000);
  const completionTokens = Math.floor(random() * 800);
  return {
    requestId: `req_${ulid(createdAt.getTime(), random)}`,
    tenantId,
    keyId: `key_${Math.floor(random() * 20)}`,
    feature: pick(FEATURES),
    operation: 'chat',
    requestedModel: model,
    model,
    provider: model === 'fast' ? 'simulator' : 'openai',
    upstreamModel: `${model}-2025-01`,
    promptName: random() < 0.3 ? 'welcome' : null,
    promptVersion: null,
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    usageSource: 'provider',
    costMicros: promptTokens * 3 + completionTokens * 12,
    status: random() < 0.98 ? 'succeeded' : 'failed',
    errorCode: null,
    queueWaitMs: Math.floor(random() * 20),
    ttftMs: 100 + Math.floor(random() * 400),
    latencyMs: 500 + Math.floor(random() * 4000),
    stream: random() < 0.6,
    piiFlags: random() < 0.05 ? ['email'] : [],
    responseId: null,
    batchId: null,
    customId: null,
    deployment: null,
    cacheHit: false,
    createdAt,
  };
}

/**
 * Inserts the records in batches, each covering the next slice of the 30 days, a few batches at a
 * time; returns records per second. In time order, as the outbox delivers them, so a day's rows
 * sit together in the table as they would in production.
 */
async function load(repo: Repository): Promise<number> {
  const total = MAIN_RECORDS + OTHER_RECORDS;
  const sliceMs = (DAYS * DAY_MS) / (total / BATCH);
  let next = 0;
  let inserted = 0;
  const startedAt = performance.now();
  const worker = async () => {
    for (let batch = next++; batch < total / BATCH; batch = next++) {
      const from = START + batch * sliceMs;
      inserted += await repo.usage.insertMany(Array.from({ length: BATCH }, () => usageRecord(from, sliceMs)));
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_BATCHES }, worker));
  return inserted / ((performance.now() - startedAt) / 1000);
}

/** p50 and p99 (nearest rank) of `runs` timed calls, after 3 untimed ones. */
async function measure(name: string, runs: number, call: (run: number) => Promise<unknown>): Promise<string> {
  for (let run = 0; run < 3; run++) await call(run);
  const ms: number[] = [];
  for (let run = 0; run < runs; run++) {
    const startedAt = performance.now();
    await call(run);
    ms.push(performance.now() - startedAt);
  }
  ms.sort((a, b) => a - b);
  const rank = (p: number) => (ms[Math.min(ms.length - 1, Math.ceil(p * ms.length) - 1)] ?? Number.NaN).toFixed(2);
  return `| ${name} | ${runs} | ${rank(0.5)} | ${rank(0.99)} |`;
}

/** One day of the main tenant, a different one per run so no single page stays hot. */
const oneDay = (run: number, extra: Partial<UsageFilter> = {}): UsageFilter => {
  const since = START + (1 + (run % (DAYS - 2))) * DAY_MS;
  return { tenantId: MAIN_TENANT, since: new Date(since), until: new Date(since + DAY_MS), ...extra };
};
const allDays: UsageFilter = { tenantId: MAIN_TENANT, since: new Date(START), until: new Date(END) };

/** The cursor after the 20th page of 100 of the run's day. */
async function deepCursor(repo: Repository, run: number): Promise<UsageCursor> {
  let cursor: UsageCursor | null = null;
  for (let page = 0; page < 20; page++) {
    const last = (await repo.usage.list(oneDay(run), 100, cursor)).at(-1);
    if (!last) break;
    cursor = { createdAt: last.createdAt, requestId: last.requestId };
  }
  if (!cursor) throw new Error('no records on the day');
  return cursor;
}

async function timeQueries(repo: Repository): Promise<string[]> {
  const cursors = await Promise.all(Array.from({ length: 50 }, (_, run) => deepCursor(repo, run)));
  return [
    '| query | runs | p50 ms | p99 ms |',
    '| --- | ---: | ---: | ---: |',
    await measure('list, one day, limit 100', 50, (run) => repo.usage.list(oneDay(run), 100, null)),
    await measure('list, one day, model = smart (25 %)', 50, (run) => repo.usage.list(oneDay(run, { model: 'smart' }), 100, null)),
    await measure('list, one day, model = reasoning (3 %)', 50, (run) => repo.usage.list(oneDay(run, { model: 'reasoning' }), 100, null)),
    await measure('list, one day, feature = summarize', 50, (run) => repo.usage.list(oneDay(run, { feature: 'summarize' }), 100, null)),
    await measure('list, one day, page 21 by cursor', 50, (run) => repo.usage.list(oneDay(run), 100, cursors[run] ?? null)),
    await measure('sum by day, one day', 50, (run) => repo.usage.sum(oneDay(run), 'day')),
    await measure('sum by model, one day', 50, (run) => repo.usage.sum(oneDay(run), 'model')),
    await measure('sum by feature, one day', 50, (run) => repo.usage.sum(oneDay(run), 'feature')),
    await measure('sum by day, 30 days', 20, () => repo.usage.sum(allDays, 'day')),
    await measure('sum by model, 30 days', 20, () => repo.usage.sum(allDays, 'model')),
    await measure('sum by feature, 30 days', 20, () => repo.usage.sum(allDays, 'feature')),
  ];
}

async function explainAndSizes(url: string): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const lines: string[] = [];
    const explained = [
      ['one-day list', usageListQuery(oneDay(14), 100, null)],
      ['one-day list, model = reasoning', usageListQuery(oneDay(14, { model: 'reasoning' }), 100, null)],
      ['30-day sum by day', usageSumQuery(allDays, 'day')],
    ] as const;
    for (const [title, query] of explained) {
      const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.text}`, query.values);
      lines.push(`EXPLAIN (ANALYZE, BUFFERS) ${title}:`, ...plan.rows.map((row) => `  ${row['QUERY PLAN']}`));
    }
    const sizes = await client.query<{ name: string; size: string }>(
      `SELECT c.relname AS name, pg_size_pretty(pg_relation_size(c.oid)) AS size FROM pg_class c
       WHERE c.relname LIKE 'usage_records%' ORDER BY pg_relation_size(c.oid) DESC`,
    );
    lines.push('Sizes:', ...sizes.rows.map((row) => `  ${row.name}: ${row.size}`));
    return lines;
  } finally {
    await client.end();
  }
}

async function runSql(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query(sql).finally(() => client.end());
}

async function main(): Promise<void> {
  const name = `gw_bench_usage_${randomBytes(4).toString('hex')}`;
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  await runSql(BASE_URL, `CREATE DATABASE ${escapeIdentifier(name)}`);
  const repo = createPostgresRepository(url.toString());
  try {
    await repo.migrate();
    const rate = await load(repo);
    console.log(
      `Loaded ${(MAIN_RECORDS + OTHER_RECORDS).toLocaleString('en')} records at ${Math.round(rate).toLocaleString('en')}/s (insertMany, ${BATCH} per batch, ${PARALLEL_BATCHES} in parallel)`,
    );
    // Settles the visibility map as autovacuum would on this insert-only table, so it cannot start mid-measurement.
    await runSql(url.toString(), 'VACUUM (ANALYZE) usage_records');
    console.log((await timeQueries(repo)).join('\n'));
    console.log((await explainAndSizes(url.toString())).join('\n'));
  } finally {
    await repo.close();
    await runSql(BASE_URL, `DROP DATABASE IF EXISTS ${escapeIdentifier(name)} WITH (FORCE)`);
  }
}

await main();
