/**
 * What the admission checks of POST /v1/chat/completions cost, in one run against one web and one
 * worker process: a "bare" tenant (no budget, no credit account, no rate limit, no Idempotency-Key)
 * against a "full" one (daily + monthly budget, credit account, finite plan, a fresh Idempotency-Key
 * per request). Concurrency-1 latency with undici, then autocannon rounds alternating bare/full.
 *
 *   node bench/admission-cost.ts [--json]
 *
 * Environment (defaults in brackets): BENCH_SEQ_REQUESTS [500] and BENCH_SEQ_WARMUP [100] per tenant,
 * BENCH_ROUNDS [5] autocannon rounds (each: bare and full, order alternating), BENCH_DURATION_S [4],
 * BENCH_WARMUP_S [1], BENCH_CONNECTIONS [64], BENCH_REDIS_URL [none: a private redis-server on a free
 * loopback port, so that Redis's CPU and command counts are the run's alone].
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { runLoad } from './autocannon.ts';
import { startStack, BENCH_MODEL, type BenchStack } from './stack.ts';
import { measureSequential, type SequentialTarget } from './sequential.ts';
import { CpuMeter } from './proc-stats.ts';
import { startPrivateRedis } from '../src/dev/private-redis.ts';
import { parseCommandStats, readRedisPid } from './redis-stats.ts';
import { envNumber } from './env.ts';
import { summariseLogs } from './child-logs.ts';
import { countTenantKeys, createFullTenant, FULL_PLAN, type BenchTenant } from './admission-tenant.ts';
import { formatReport, summarise, VARIANTS, type LoadCell, type RedisPerRequest, type Variant } from './admission-report.ts';

const sequentialRequests = envNumber('BENCH_SEQ_REQUESTS', 500, 1, 10_000);
const sequentialWarmup = envNumber('BENCH_SEQ_WARMUP', 100, 0, 10_000);
const rounds = envNumber('BENCH_ROUNDS', 5, 1, 10);
const durationS = envNumber('BENCH_DURATION_S', 4, 1, 60);
const warmupS = envNumber('BENCH_WARMUP_S', 1, 0, 30);
const connections = envNumber('BENCH_CONNECTIONS', 64, 1, 512);
const sharedRedisUrl = process.env.BENCH_REDIS_URL || null;
const printJson = process.argv.includes('--json');

const SEQUENTIAL_DEADLINE_MS = 60_000;
// Start-up, sequential part, every autocannon cell with its pause, and clean-up.
const budgetMs = (60 + SEQUENTIAL_DEADLINE_MS / 1000 + rounds * 2 * (durationS + warmupS + 3) + 30) * 1000;

const BODY = JSON.stringify({
  model: BENCH_MODEL,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello to the benchmark.' },
  ],
  max_tokens: 64,
});

/**
 * Both variants send one fresh UUID header per request, so that the client rebuilds every request
 * in both and spends the same CPU (it shares the machine with the gateway); only "full" sends it
 * as Idempotency-Key, which the gateway acts on.
 */
function endpoint(stack: BenchStack, variant: Variant, tenants: Record<Variant, BenchTenant>): SequentialTarget {
  const fresh = variant === 'full' ? 'idempotency-key' : 'x-bench-nonce';
  return {
    name: variant,
    baseUrl: stack.gatewayUrl,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tenants[variant].apiKey}` },
    body: BODY,
    freshHeaders: () => ({ [fresh]: randomUUID() }),
  };
}

/** One request per variant before measuring: proves that "full" runs every check and "bare" none it can skip. */
async function checkVariants(stack: BenchStack, tenants: Record<Variant, BenchTenant>): Promise<void> {
  const send = async (variant: Variant, headers: Record<string, string>) => {
    const e = endpoint(stack, variant, tenants);
    const response = await fetch(`${e.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { ...e.headers, ...headers },
      body: e.body,
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${variant}: status ${response.status}`);
    return response.headers;
  };
  const bare = await send('bare', {});
  if (bare.has('x-ratelimit-limit-requests')) throw new Error('bare: the rate limiter ran (x-ratelimit-* headers present)');
  const key = randomUUID();
  const first = await send('full', { 'idempotency-key': key });
  if (first.get('x-ratelimit-limit-requests') !== String(FULL_PLAN.keyRequestsPerMinute)) {
    throw new Error(`full: expected the plan's rate limits in x-ratelimit-*, got ${JSON.stringify(Object.fromEntries(first))}`);
  }
  const replay = await send('full', { 'idempotency-key': key });
  if (replay.get('idempotent-replayed') !== 'true') throw new Error('full: a repeated Idempotency-Key was not replayed');
}

/** Redis's counters since it started (used_memory: now). */
async function readRedisCounters(redis: Redis): Promise<RedisPerRequest> {
  const stats = await redis.info('commandstats');
  const counters = { commands: 0, scripts: 0, scriptUs: 0, bytes: 0 };
  for (const [name, { calls, usec }] of parseCommandStats(stats)) {
    counters.commands += calls;
    if (name === 'evalsha' || name === 'eval') {
      counters.scripts += calls;
      counters.scriptUs += usec;
    }
  }
  counters.bytes = Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1] ?? Number.NaN);
  return counters;
}

async function runCell(
  stack: BenchStack,
  tenants: Record<Variant, BenchTenant>,
  meter: CpuMeter,
  redis: Redis,
  variant: Variant,
  round: number,
): Promise<LoadCell> {
  const e = endpoint(stack, variant, tenants);
  process.stderr.write(`  round ${round} ${variant} ×${connections} … `);
  const load = (duration: number) =>
    runLoad({
      url: `${e.baseUrl}/chat/completions`,
      method: 'POST',
      headers: e.headers,
      body: e.body,
      freshHeaders: e.freshHeaders,
      connections,
      duration,
      timeout: 10,
    });
  const warm = warmupS > 0 ? await load(warmupS) : null;
  const redisBefore = await readRedisCounters(redis);
  await meter.begin();
  const r = await load(durationS);
  const cpu = await meter.end();
  const redisAfter = await readRedisCounters(redis);
  const completed = r.latency.totalCount;
  const failures = r.errors + r.timeouts + r.non2xx + (warm ? warm.errors + warm.timeouts + warm.non2xx : 0);
  // % of one core → µs of CPU per request: (cpu / 100) s per s × 1e6 / requests per s.
  const perRequest = (percent: number) => (completed > 0 ? (percent * 10_000 * durationS) / completed : Number.NaN);
  const cpuUsPerRequest = Object.fromEntries(Object.entries(cpu).map(([name, percent]) => [name, perRequest(percent)]));
  const redisDelta = (pick: (counters: RedisPerRequest) => number) => (pick(redisAfter) - pick(redisBefore)) / completed;
  const redisPerRequest = {
    commands: redisDelta((x) => x.commands),
    scripts: redisDelta((x) => x.scripts),
    scriptUs: redisDelta((x) => x.scriptUs),
    bytes: redisDelta((x) => x.bytes),
  };
  process.stderr.write(
    `${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, failures ${failures}, other work ${(cpu.other ?? 0).toFixed(0)} %\n`,
  );
  const { p50, p99 } = r.latency;
  return {
    variant,
    round,
    rps: r.requests.average,
    p50,
    p99,
    completed,
    failures,
    machinePercent: cpu.total ?? Number.NaN,
    otherPercent: cpu.other ?? Number.NaN,
    cpuUsPerRequest,
    redis: redisPerRequest,
  };
}

async function main(): Promise<number> {
  process.stderr.write(`starting upstream, database, web and worker (run bounded to ${Math.round(budgetMs / 1000)} s)…\n`);
  const privateRedis = sharedRedisUrl === null ? await startPrivateRedis() : null;
  const redisUrl = privateRedis?.url ?? (sharedRedisUrl as string);
  let stack: BenchStack;
  try {
    // 0 = unlimited: the bare tenant (no plan) skips the rate limiter; the full tenant's plan overrides these.
    const env = { TENANT_RPM: '0', TENANT_TPM: '0', KEY_RPM: '0', KEY_TPM: '0' };
    stack = await startStack({
      redisUrl,
      workers: 1,
      workerConcurrency: connections * 2,
      upstreamConnections: connections * 2,
      nodeOptions: { web: '', worker: '' },
      env,
    });
  } catch (error) {
    await privateRedis?.stop();
    throw error;
  }
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const cleanUp = async () => {
    redis.disconnect();
    await stack.close();
    await privateRedis?.stop();
  };
  const watchdog = setTimeout(() => {
    process.stderr.write(`admission-cost: over its ${Math.round(budgetMs / 1000)} s budget; stopping\n`);
    void cleanUp().finally(() => process.exit(2));
  }, budgetMs);
  watchdog.unref();
  const stopOnSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`admission-cost: ${signal}; cleaning up\n`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    const full = await createFullTenant(stack.env.DATABASE_URL as string);
    const tenants: Record<Variant, BenchTenant> = { bare: { tenantId: stack.tenantId, apiKey: stack.apiKey }, full };
    await checkVariants(stack, tenants);

    const { web, workers, upstream } = stack.processes;
    const pids = new Map<string, number>([
      ['client', process.pid],
      ['upstream', upstream.child.pid as number],
      ['web', web.child.pid as number],
      ['worker', workers[0]?.child.pid as number],
    ]);
    const redisPid = privateRedis?.pid ?? (await readRedisPid(redisUrl));
    if (redisPid !== null) pids.set('redis', redisPid);
    const meter = new CpuMeter(pids);

    process.stderr.write(`  concurrency 1: ${sequentialWarmup} warm-up + ${sequentialRequests} requests per tenant, alternating…\n`);
    await meter.begin();
    const samples = await measureSequential([endpoint(stack, 'bare', tenants), endpoint(stack, 'full', tenants)], {
      stream: false,
      warmup: sequentialWarmup,
      count: sequentialRequests,
      deadlineMs: SEQUENTIAL_DEADLINE_MS,
    });
    const sequentialCpu = await meter.end();
    const cells: LoadCell[] = [];
    for (let round = 1; round <= rounds; round++) {
      // bare, full, full, bare, …: a drift over the run (e.g. Redis filling up) weighs on both alike.
      for (const variant of round % 2 === 1 ? VARIANTS : [...VARIANTS].reverse()) {
        cells.push(await runCell(stack, tenants, meter, redis, variant, round));
        // Let the cell's last in-flight jobs finish before the next one is measured.
        await new Promise((done) => setTimeout(done, 1_000));
      }
    }

    const prefix = stack.env.REDIS_PREFIX as string;
    const keys = { bare: await countTenantKeys(redis, prefix, tenants.bare.tenantId), full: await countTenantKeys(redis, prefix, tenants.full.tenantId) };
    const summary = summarise(samples, cells, sequentialCpu);
    process.stdout.write(`\n${formatReport({ sequentialWarmup, rounds, durationS, warmupS, connections }, summary, cells, keys)}\n`);
    if (printJson) process.stdout.write(`${JSON.stringify({ summary, cells, keys })}\n`);
    const logged = summariseLogs([web, ...workers].map((p) => p.output()).join('\n'));
    if (logged !== '') process.stdout.write(`\nweb/worker log lines at warn and above (count × process level message):\n${logged}\n`);
    const failures = VARIANTS.reduce((sum, v) => sum + summary.sequential[v].errors + summary.load[v].failures, 0);
    return failures === 0 ? 0 : 1;
  } finally {
    clearTimeout(watchdog);
    process.stderr.write('cleaning up…\n');
    await cleanUp();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`admission-cost failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
