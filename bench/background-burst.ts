/**
 * A burst of background responses (`POST /v1/responses` with `background: true`) far faster than the
 * workers can run them, on one stack (a private redis-server, a fresh database, one web and one
 * worker process, every admission feature on; the models are the built-in simulator's). It checks
 * that every request is accepted (200, `status: "queued"`) or refused (429 `rate_limit_exceeded` in
 * the error envelope, nothing stored), that none is lost (every accepted id ends `completed`, read
 * from the `responses` table for every id and by GET for a sample), and times the queue's drain. It
 * measures the accept latency against the same request sent synchronously, and Redis's commands per
 * response (accept alone, and the whole life: worker run and outbox drain) against a synchronous one's.
 *
 *   node bench/background-burst.ts [--requests N] [--conns C] [--json] [more options: see USAGE]
 *
 * Defaults: 10,000 requests over 64 connections; the worker runs 2 jobs at once against a
 * simulator answering after 100 ms, so it drains ~60 responses/s while the web accepts ~10× that.
 * The exit code is 1 when a correctness goal failed (an answer neither 200 nor a documented 429, a
 * response lost or not completed, a reservation left, a refusal that stored something); the latency
 * goal is reported, not enforced.
 */
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Pool } from 'undici';
import { Value } from '@sinclair/typebox/value';
import type { WrittenCatalog } from '../src/domain/catalog/schema.ts';
import { ErrorEnvelopeSchema } from '../src/errors/to-envelope.ts';
import { createRedisKeys } from '../src/infra/redis/keys.ts';
import { createPostgresRepository } from '../src/infra/store/postgres/adapter.ts';
import { generateApiKey } from '../src/domain/access/api-key-secret.ts';
import type { BenchStack } from './stack.ts';
import { gatewayHeaders, startAllFeaturesStack } from './all-features.ts';
import { FULL_PLAN } from './admission-tenant.ts';
import { CleanupStack, runBench } from './cleanup-stack.ts';
import { costPer } from './redis-stats.ts';
import { describeCheckout } from './base-worktree.ts';
import { summariseLogs } from './child-logs.ts';
import {
  formatReport,
  phaseCost,
  toJson,
  verdicts,
  type Burst,
  type BurstReport,
  type Idle,
  type Outcome,
  type Phase,
  type RefusalPhase,
  type Settings,
} from './background-burst-report.ts';
import {
  completedNow,
  getCompleted,
  getUnknown,
  loadAverage,
  notCompleted,
  outstanding,
  parseObject,
  probe,
  sampleOf,
  storedOfRefused,
  waitCompleted,
  type Instruments,
} from './background-burst-checks.ts';

const CHECKOUT = fileURLToPath(new URL('../', import.meta.url));
const SLOW_MODEL = 'bench-sim-slow';
const FAST_MODEL = 'bench-sim-fast';
const TOKENS = 20;
const USAGE =
  'usage: node bench/background-burst.ts [--requests N] [--conns C] [--latency-ms L] [--worker-concurrency W] [--seq S] [--warm W] [--paused K] [--refuse M] [--cap Q] [--drain-timeout S] [--json]';

/** Each integer option: its default, least and greatest value. */
const INTEGER_OPTIONS = {
  requests: [10_000, 1, 1_000_000],
  conns: [64, 1, 1024],
  'latency-ms': [100, 0, 60_000],
  'worker-concurrency': [2, 1, 10_000],
  seq: [300, 0, 100_000],
  warm: [300, 0, 100_000],
  paused: [2000, 0, 1_000_000],
  refuse: [1000, 0, 1_000_000],
  cap: [200, 1, 1_000_000],
  'drain-timeout': [600, 10, 86_400],
} as const satisfies Record<string, readonly [number, number, number]>;
type IntegerOption = keyof typeof INTEGER_OPTIONS;

/** The settings, or why the command line has none. */
function parseSettings(): { settings: Settings; problem: null } | { settings: null; problem: string } {
  try {
    const options = Object.fromEntries(
      Object.entries(INTEGER_OPTIONS).map(([name, [fallback]]) => [name, { type: 'string' as const, default: String(fallback) }]),
    );
    const { values } = parseArgs({ options: { ...options, json: { type: 'boolean', default: false } } }) as { values: Record<string, string | boolean> };
    const int = (name: IntegerOption) => {
      const [, min, max] = INTEGER_OPTIONS[name];
      const value = Number(values[name]);
      if (!Number.isInteger(value) || value < min || value > max)
        throw new Error(`--${name} must be an integer in [${min}, ${max}]; got ${String(values[name])}`);
      return value;
    };
    const settings: Settings = {
      requests: int('requests'),
      connections: int('conns'),
      latencyMs: int('latency-ms'),
      workerConcurrency: int('worker-concurrency'),
      sequential: int('seq'),
      warm: int('warm'),
      paused: int('paused'),
      refuse: int('refuse'),
      cap: int('cap'),
      drainTimeoutS: int('drain-timeout'),
      json: values.json === true,
    };
    return { settings, problem: null };
  } catch (error) {
    return { settings: null, problem: error instanceof Error ? error.message : String(error) };
  }
}

const parsed = parseSettings();
if (parsed.problem !== null) {
  process.stderr.write(`${parsed.problem}\n${USAGE}\n`);
  process.exit(2);
}
const { settings } = parsed;

// Start-up, then every phase at a pessimistic 50 requests/s, then up to three drains to their timeout.
const budgetMs =
  (180 + 3 * settings.drainTimeoutS + (settings.requests * 2 + settings.paused + settings.refuse + 2 * settings.sequential + 2 * settings.warm) / 50) * 1000;
const cleanups = new CleanupStack('background-burst');
const log = (text: string) => process.stderr.write(text);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Both simulator models answer the same 20 tokens; the slow one after `latencyMs`, which keeps the workers behind. */
function simulatorModels(): WrittenCatalog['models'] {
  const model = (latencyMs: number) => ({
    provider: 'simulator' as const,
    upstream_model: 'bench-sim',
    context_window: 8192,
    max_output_tokens: 1024,
    input_price_per_mtok: 1,
    output_price_per_mtok: 2,
    simulator: { completion_tokens: TOKENS, latency_ms: latencyMs },
  });
  return { [SLOW_MODEL]: model(settings.latencyMs), [FAST_MODEL]: model(0) };
}

/** The request of every phase; only the model and `background` differ. */
function responsesBody(model: string, background: boolean): string {
  return JSON.stringify({ model, instructions: 'You are terse.', input: 'Say hello to the benchmark.', max_output_tokens: 64, background });
}

/** A 429 as documented: the error envelope, `rate_limit_error` / `rate_limit_exceeded`, and a Retry-After. */
function refusal(text: string, retryAfter: string | undefined): Pick<Outcome, 'kind' | 'id' | 'detail'> {
  const body = parseObject(text);
  if (!Value.Check(ErrorEnvelopeSchema, body)) return { kind: 'error', id: null, detail: `429 outside the error envelope: ${text.slice(0, 200)}` };
  const { error } = body;
  if (error.type !== 'rate_limit_error' || error.code !== 'rate_limit_exceeded' || error.param !== null || !/^\d+$/.test(retryAfter ?? ''))
    return { kind: 'error', id: null, detail: `429 not rate_limit_exceeded with Retry-After (${retryAfter}): ${text.slice(0, 200)}` };
  // Had it been accepted, its response would have been resp_<its request id>.
  return { kind: 'refused', id: `resp_${error.request_id}`, detail: null };
}

/** Sorts one answer to a background request: accepted (queued), refused, or anything else (an error). */
function classifyAccepted(status: number, text: string, retryAfter: string | undefined): Pick<Outcome, 'kind' | 'id' | 'detail'> {
  if (status === 429) return refusal(text, retryAfter);
  const body = parseObject(text);
  if (status === 200 && body?.object === 'response' && body.status === 'queued' && body.background === true && String(body.id).startsWith('resp_'))
    return { kind: 'ok', id: String(body.id), detail: null };
  return { kind: 'error', id: null, detail: `status ${status}: ${text.slice(0, 200)}` };
}

/** Sorts one answer to a synchronous request: a completed Response with the simulator's tokens. */
function classifyCompleted(status: number, text: string, retryAfter: string | undefined): Pick<Outcome, 'kind' | 'id' | 'detail'> {
  if (status === 429) return refusal(text, retryAfter);
  const body = parseObject(text);
  const usage = body?.usage as { output_tokens?: unknown } | undefined;
  if (status === 200 && body?.object === 'response' && body.status === 'completed' && usage?.output_tokens === TOKENS)
    return { kind: 'ok', id: String(body.id), detail: null };
  return { kind: 'error', id: null, detail: `status ${status}: ${text.slice(0, 200)}` };
}

type Classify = typeof classifyAccepted;

/** Keep-alive connections to the web tier with one tenant's key. */
class Sender {
  readonly #pool: Pool;
  readonly #path: string;
  readonly #headers: Record<string, string>;

  constructor(stack: BenchStack, apiKey: string, connections: number) {
    const url = new URL(`${stack.gatewayUrl}/responses`);
    this.#pool = new Pool(url.origin, { connections, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
    this.#path = url.pathname;
    this.#headers = { ...gatewayHeaders(stack), authorization: `Bearer ${apiKey}` };
  }

  /** One request, timed from sending it to the end of the answer's body. */
  async send(body: string, classify: Classify): Promise<Outcome> {
    const sentAt = performance.now();
    try {
      const response = await this.#pool.request({ path: this.#path, method: 'POST', headers: this.#headers, body });
      const text = await response.body.text();
      const retryAfter = response.headers['retry-after'];
      const sorted = classify(response.statusCode, text, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
      return { status: response.statusCode, latencyMs: performance.now() - sentAt, ...sorted };
    } catch (error) {
      return { status: 0, latencyMs: performance.now() - sentAt, kind: 'error', id: null, detail: error instanceof Error ? error.message : String(error) };
    }
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

/** `count` requests over `connections` keep-alive connections, each sending its next as soon as its last answer ended. */
async function sendBurst(stack: BenchStack, apiKey: string, body: string, count: number, classify: Classify): Promise<Burst> {
  const sender = new Sender(stack, apiKey, settings.connections);
  const outcomes: Outcome[] = [];
  let sent = 0;
  const connection = async () => {
    while (sent < count) {
      sent++;
      outcomes.push(await sender.send(body, classify));
    }
  };
  const startedAt = performance.now();
  try {
    await Promise.all(Array.from({ length: Math.min(settings.connections, count) }, connection));
  } finally {
    await sender.close();
  }
  return { outcomes, elapsedS: (performance.now() - startedAt) / 1000 };
}

/** Ids of one kind of outcome. */
const idsOf = (outcomes: readonly Outcome[], kind: Outcome['kind']) => outcomes.flatMap((o) => (o.kind === kind && o.id !== null ? [o.id] : []));

/**
 * Concurrency 1: `count` background and `count` synchronous requests of the fast model, one at a
 * time over one keep-alive connection each, alternating (and which of the two goes first alternates too).
 */
async function sequentialPairs(stack: BenchStack, count: number, warm: number): Promise<NonNullable<BurstReport['sequential']>> {
  const senders = { bg: new Sender(stack, stack.apiKey, 1), sync: new Sender(stack, stack.apiKey, 1) };
  const bodies = { bg: responsesBody(FAST_MODEL, true), sync: responsesBody(FAST_MODEL, false) };
  const outcomes = { bg: [] as Outcome[], sync: [] as Outcome[] };
  try {
    for (let i = 0; i < warm + count; i++) {
      for (const kind of i % 2 === 0 ? (['bg', 'sync'] as const) : (['sync', 'bg'] as const)) {
        const one = await senders[kind].send(bodies[kind], kind === 'bg' ? classifyAccepted : classifyCompleted);
        if (i >= warm) outcomes[kind].push(one);
      }
    }
  } finally {
    await Promise.all([senders.bg.close(), senders.sync.close()]);
  }
  return { background: outcomes.bg, sync: outcomes.sync };
}

function stopWorker(stack: BenchStack, signal: 'SIGSTOP' | 'SIGCONT'): void {
  for (const worker of stack.processes.workers) worker.child.kill(signal);
}

/** Errors worth printing, the first 20 of the run. */
function noteErrors(report: BurstReport, phase: string, outcomes: readonly Outcome[]): void {
  for (const o of outcomes) if (o.kind === 'error' && report.errors.length < 20) report.errors.push(`${phase}: ${o.detail}`);
}

/** Sends a burst, logs and notes its outcome. */
async function burstOf(into: Instruments, report: BurstReport, phase: string, body: string, count: number, classify: Classify, apiKey = into.stack.apiKey) {
  const burst = await sendBurst(into.stack, apiKey, body, count, classify);
  const n = (kind: Outcome['kind']) => burst.outcomes.filter((o) => o.kind === kind).length;
  log(`    ${phase}: ${n('ok')} ok, ${n('refused')} refused, ${n('error')} errors in ${burst.elapsedS.toFixed(1)} s\n`);
  for (const o of burst.outcomes.filter((x) => x.kind === 'error').slice(0, 5)) log(`      error: ${o.detail}\n`);
  noteErrors(report, phase, burst.outcomes);
  return burst;
}

const drainOf = (into: Instruments, tenantId: string, ids: readonly string[], what: string) => waitCompleted(into, tenantId, ids, settings.drainTimeoutS, what);

/** Both kinds on the fast model, so that web and worker run compiled code before anything is measured. */
async function warmUp(into: Instruments, report: BurstReport): Promise<void> {
  log(`warm-up: ${settings.warm} synchronous and ${settings.warm} background requests…\n`);
  await burstOf(into, report, 'warm-up sync', responsesBody(FAST_MODEL, false), settings.warm, classifyCompleted);
  const bg = await burstOf(into, report, 'warm-up background', responsesBody(FAST_MODEL, true), settings.warm, classifyAccepted);
  await checkEarlier(into, report, idsOf(bg.outcomes, 'ok'), 'warm-up');
}

/** Waits for background requests sent outside the measured bursts, and counts those not completed. */
async function checkEarlier(into: Instruments, report: BurstReport, ids: readonly string[], what: string): Promise<void> {
  await drainOf(into, into.stack.tenantId, ids, what);
  report.earlier.accepted += ids.length;
  report.earlier.notCompleted += (await notCompleted(into.db, into.stack.tenantId, ids)).length;
}

/** What Redis does with nothing to do: BullMQ's blocking fetch, the outbox drainer's polls, the reaper, in commands/s. */
async function idleRate(into: Instruments): Promise<Idle> {
  log('idle Redis for 3 s…\n');
  const from = await probe(into);
  await sleep(3000);
  const to = await probe(into);
  const cost = costPer(from.redis, to.redis, 1);
  const seconds = (to.atMs - from.atMs) / 1000;
  return { commandsPerS: cost.commands / seconds, cpuUsPerS: cost.cpuUs / seconds };
}

/**
 * A burst of `count` requests and the counters around it: `answered` from before the first request
 * to the last answer, `whole` to the moment every accepted response is completed in the store and
 * the outbox is empty. With `pauseWorker` the worker is stopped (SIGSTOP) until the last answer, so
 * that no command of its falls in `answered`.
 */
async function measuredBurst(
  into: Instruments,
  report: BurstReport,
  phase: string,
  request: { body: string; count: number; classify: Classify; pauseWorker: boolean },
): Promise<Phase> {
  const tenant = into.stack.tenantId;
  if (request.pauseWorker) stopWorker(into.stack, 'SIGSTOP');
  const before = await probe(into);
  const burst = await burstOf(into, report, phase, request.body, request.count, request.classify);
  const answered = await probe(into);
  if (request.pauseWorker) stopWorker(into.stack, 'SIGCONT');
  const ids = idsOf(burst.outcomes, 'ok');
  const completedAtLastAnswer = await completedNow(into.db, tenant, ids);
  const drain = await drainOf(into, tenant, ids, phase);
  const whole = await probe(into);
  return {
    burst,
    answered: phaseCost(before, answered, ids.length, request.pauseWorker ? null : report.idle),
    whole: phaseCost(before, whole, ids.length, report.idle),
    drain,
    completedAtLastAnswer,
    notCompleted: await notCompleted(into.db, tenant, ids),
    gets: await getCompleted(into.stack, into.stack.apiKey, sampleOf(ids, 200), TOKENS),
  };
}

/** A tenant whose plan caps its queue at --cap, sent --refuse background requests at once. */
async function refusals(into: Instruments, report: BurstReport): Promise<RefusalPhase> {
  log(`refusals: ${settings.refuse} background requests of a tenant capped at ${settings.cap} queued…\n`);
  const repository = createPostgresRepository(into.stack.env.DATABASE_URL as string);
  const capped = { tenantId: `bench_capped_${randomBytes(4).toString('hex')}`, key: generateApiKey() };
  try {
    await repository.tenants.create({ id: capped.tenantId, name: 'bench capped' });
    await repository.apiKeys.create({ id: capped.key.id, tenantId: capped.tenantId, role: 'app', secretHash: capped.key.secretHash });
    await repository.budgets.setPlan({ tenantId: capped.tenantId, ...FULL_PLAN, maxQueued: settings.cap });
  } finally {
    await repository.close();
  }
  const burst = await burstOf(into, report, 'capped tenant', responsesBody(SLOW_MODEL, true), settings.refuse, classifyAccepted, capped.key.secret);
  const accepted = idsOf(burst.outcomes, 'ok');
  const refused = idsOf(burst.outcomes, 'refused');
  const drain = await drainOf(into, capped.tenantId, accepted, 'capped tenant');
  return {
    burst,
    drain,
    notCompleted: await notCompleted(into.db, capped.tenantId, accepted),
    refusedStored: await storedOfRefused(into, capped.tenantId, refused),
    refusedByGet: await getUnknown(into.stack, capped.key.secret, sampleOf(refused, 50)),
    outstanding: await outstanding(into, capped.tenantId),
  };
}

async function main(): Promise<number> {
  log(`background-burst: bounded to ${Math.round(budgetMs / 1000)} s\n`);
  const disarm = cleanups.guard(budgetMs);
  try {
    return await cleanups.scope(async () => {
      const report: BurstReport = {
        label: await describeCheckout(CHECKOUT),
        settings,
        date: new Date().toISOString(),
        load: { start: await loadAverage() },
        phases: {},
        earlier: { accepted: 0, notCompleted: 0 },
        errors: [],
      };
      log('starting a private Redis, database, web and one worker…\n');
      const { redisServer, stack } = await startAllFeaturesStack(cleanups, {
        root: undefined,
        connections: settings.connections,
        models: simulatorModels,
        // No queue cap to speak of for the stack's tenant; the refusals' tenant has its own plan.
        env: { WORKER_CONCURRENCY: String(settings.workerConcurrency), TENANT_MAX_QUEUED: '100000000' },
      });
      // A stopped worker ignores SIGTERM: whatever happens, it runs again before the stack stops.
      cleanups.register(async () => stopWorker(stack, 'SIGCONT'));
      const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
      cleanups.register(async () => redis.disconnect());
      const db = new pg.Pool({ connectionString: stack.env.DATABASE_URL, max: 2 });
      cleanups.register(() => db.end());
      const into: Instruments = { stack, redis, db, keys: createRedisKeys(stack.env.REDIS_PREFIX as string, 1) };

      if (settings.warm > 0) await warmUp(into, report);
      report.idle = await idleRate(into);
      if (settings.sequential > 0) {
        log(`concurrency 1: ${settings.sequential} background and ${settings.sequential} synchronous requests, alternating…\n`);
        report.sequential = await sequentialPairs(stack, settings.sequential, Math.min(50, settings.warm));
        noteErrors(report, 'concurrency 1', [...report.sequential.background, ...report.sequential.sync]);
        await checkEarlier(into, report, idsOf(report.sequential.background, 'ok'), 'concurrency 1');
      }
      log(`synchronous burst: ${settings.requests} requests (background false, no upstream latency) over ${settings.connections} connections…\n`);
      report.phases.sync = await measuredBurst(into, report, 'synchronous', {
        body: responsesBody(FAST_MODEL, false),
        count: settings.requests,
        classify: classifyCompleted,
        pauseWorker: false,
      });
      if (settings.paused > 0) {
        log(`background burst with the worker stopped: ${settings.paused} requests…\n`);
        report.phases.paused = await measuredBurst(into, report, 'background, worker stopped', {
          body: responsesBody(SLOW_MODEL, true),
          count: settings.paused,
          classify: classifyAccepted,
          pauseWorker: true,
        });
      }
      log(`background burst: ${settings.requests} requests over ${settings.connections} connections…\n`);
      report.phases.background = await measuredBurst(into, report, 'background', {
        body: responsesBody(SLOW_MODEL, true),
        count: settings.requests,
        classify: classifyAccepted,
        pauseWorker: false,
      });
      report.outstanding = await outstanding(into, stack.tenantId);
      if (settings.refuse > 0) report.phases.refusal = await refusals(into, report);

      report.load.end = await loadAverage();
      const { web, workers } = stack.processes;
      report.logs = summariseLogs([web, ...workers].map((p) => p.output()).join('\n'));
      process.stdout.write(`\n${formatReport(report)}\n`);
      if (settings.json) process.stdout.write(`${JSON.stringify(toJson(report))}\n`);
      // The latency goals are reported, not enforced: on a shared machine they move with its load.
      return verdicts(report).every((v) => v.kind !== 'correctness' || v.met !== false) ? 0 : 1;
    });
  } finally {
    disarm();
    await cleanups.unwind();
  }
}

runBench('background-burst', cleanups, main);
