/**
 * Batches in spare capacity: that a batch leaves interactive traffic alone, how fast it
 * runs when nothing else does, and that a 200 MB input file costs web and worker no memory to
 * speak of. One stack (a private redis-server, a fresh database, one web and one worker process,
 * every admission feature on; the models are the built-in simulator's):
 *
 * 1. a steady open-loop load of non-streamed chat completions, measured three times: phase A with
 *    no batch, phase B while a batch of --lines short lines (another tenant's, same model) runs,
 *    and phase A′ with no batch again once that batch ended (how far the machine drifted); the
 *    interactive queue wait (usage records) and end-to-end latency of each, and p99(B) over the p99
 *    of A and A′ together;
 *    the batch is polled to its end and its output file read back;
 * 2. the same batch alone, at the whole spare capacity: lines/s;
 * 3. a --memory-mb input file (lines padded with prose) uploaded in one multipart POST streamed from
 *    a generator and run to its end, with web and worker VmRSS sampled before, during the upload and
 *    during the run. It runs first, on processes that have only been warmed up, and the machine is
 *    left to settle before phase A.
 *
 *   node bench/batch-lane.ts [--lines N] [--rate R] [--seconds S] [--skip-memory] [--json] [more options: see USAGE]
 *
 * BATCH_LANE_SHARE, BATCH_TENANT_SHARE and BATCH_SEGMENT_LINES in the bench's environment are passed
 * on to web and worker. The exit code is 1 when a correctness goal failed (a batch not completed,
 * its output short, an interactive request failed); the ratio and memory goals are reported.
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { WrittenCatalog } from '../src/domain/catalog/schema.ts';
import { gatewayHeaders, startAllFeaturesStack } from './all-features.ts';
import { randomBytes } from 'node:crypto';
import { FULL_PLAN, type BenchTenant } from './admission-tenant.ts';
import { createPostgresRepository } from '../src/infra/store/postgres/adapter.ts';
import { generateApiKey } from '../src/domain/access/api-key-secret.ts';
import { CleanupStack, runBench } from './cleanup-stack.ts';
import { describeCheckout } from './base-worktree.ts';
import { summariseLogs } from './child-logs.ts';
import { loadAverage } from './background-burst-checks.ts';
import { CpuMeter } from './proc-stats.ts';
import { checkAnswer } from './sequential.ts';
import { RssSampler, type RssSpan } from './rss-sampler.ts';
import { recordedTimes, runOpenLoop } from './open-loop.ts';
import { BatchApi, type InputFileSpec } from './batch-api.ts';
import type { BenchStack } from './stack.ts';
import {
  formatReport,
  toJson,
  verdicts,
  type BatchPhase,
  type InteractivePhase,
  type LaneReport,
  type MemoryPhase,
  type Settings,
} from './batch-lane-report.ts';

const CHECKOUT = fileURLToPath(new URL('../', import.meta.url));
const MODEL = 'bench-sim';
const MEMORY_MODEL = 'bench-sim-memory';
const TOKENS = 16;
const POLL_MS = 500;
const SETTLE_S = 15;
const BATCH_ENV = ['BATCH_LANE_SHARE', 'BATCH_TENANT_SHARE', 'BATCH_SEGMENT_LINES'] as const;
const USAGE =
  'usage: node bench/batch-lane.ts [--lines N] [--rate R] [--seconds S] [--latency-ms L] [--worker-concurrency W] [--supervise-ms M] [--memory-mb MB] [--memory-lines N] [--memory-latency-ms L] [--batch-timeout S] [--skip-memory] [--skip-alone] [--json]';

/** Each integer option: its default, least and greatest value. */
const INTEGER_OPTIONS = {
  lines: [20_000, 1, 50_000],
  rate: [300, 1, 5_000],
  seconds: [60, 1, 3_600],
  'latency-ms': [100, 1, 60_000],
  'worker-concurrency': [64, 2, 10_000],
  'supervise-ms': [500, 100, 600_000],
  // FILE_MAX_BYTES is 200 MiB: 209 MB is the most that is not refused.
  'memory-mb': [200, 1, 209],
  'memory-lines': [40_000, 1, 50_000],
  'memory-latency-ms': [20, 0, 60_000],
  'batch-timeout': [900, 10, 86_400],
} as const satisfies Record<string, readonly [number, number, number]>;
type IntegerOption = keyof typeof INTEGER_OPTIONS;

/** The settings, or why the command line has none. */
function parseSettings(): { settings: Settings; problem: null } | { settings: null; problem: string } {
  try {
    const options = Object.fromEntries(
      Object.entries(INTEGER_OPTIONS).map(([name, [fallback]]) => [name, { type: 'string' as const, default: String(fallback) }]),
    );
    const flags = {
      'skip-memory': { type: 'boolean', default: false },
      'skip-alone': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    } as const;
    const { values } = parseArgs({ options: { ...options, ...flags } }) as { values: Record<string, string | boolean> };
    const int = (name: IntegerOption) => {
      const [, min, max] = INTEGER_OPTIONS[name];
      const value = Number(values[name]);
      if (!Number.isInteger(value) || value < min || value > max)
        throw new Error(`--${name} must be an integer in [${min}, ${max}]; got ${String(values[name])}`);
      return value;
    };
    const batchEnv = Object.fromEntries(BATCH_ENV.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])));
    const workerConcurrency = int('worker-concurrency');
    const settings: Settings = {
      lines: int('lines'),
      rate: int('rate'),
      seconds: int('seconds'),
      latencyMs: int('latency-ms'),
      workerConcurrency,
      superviseMs: int('supervise-ms'),
      memoryMb: int('memory-mb'),
      memoryLines: int('memory-lines'),
      memoryLatencyMs: int('memory-latency-ms'),
      batchTimeoutS: int('batch-timeout'),
      skipMemory: values['skip-memory'] === true,
      skipAlone: values['skip-alone'] === true,
      json: values.json === true,
      batchEnv,
      // As src/worker/start-worker.ts sizes the lane (0.25: BATCH_TENANT_SHARE's default).
      tenantSlots: Math.max(1, Math.floor(workerConcurrency * Number(batchEnv.BATCH_TENANT_SHARE ?? 0.25))),
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

// Start-up, warm-up and settling, the three interactive phases, then up to three batches to their timeout.
const budgetMs = (300 + 4 * settings.seconds + 3 * settings.batchTimeoutS) * 1000;
const cleanups = new CleanupStack('batch-lane');
const log = (text: string) => process.stderr.write(text);

/** The interactive and batch model, and the large batch's (which answers sooner: the run is about memory). */
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
  return { [MODEL]: model(settings.latencyMs), [MEMORY_MODEL]: model(settings.memoryLatencyMs) };
}

/** What every phase uses. */
interface Rig {
  stack: BenchStack;
  db: pg.Pool;
  /** The batch tenant's Files and Batch API. */
  api: BatchApi;
  pids: ReadonlyMap<string, number>;
}

/** The open-loop load for `seconds`, and what the usage records say of it. */
async function interactive(rig: Rig, seconds: number): Promise<InteractivePhase> {
  const meter = new CpuMeter(rig.pids);
  await meter.begin();
  const load = await runOpenLoop({
    url: `${rig.stack.gatewayUrl}/chat/completions`,
    headers: gatewayHeaders(rig.stack),
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello to the benchmark.' }], max_tokens: TOKENS }),
    rate: settings.rate,
    seconds,
    connections: 256,
    check: (status, text) => checkAnswer(status, text, false),
  });
  const cpu = await meter.end();
  const good = load.samples.filter((s) => s.error === null);
  const recorded = await recordedTimes(
    rig.db,
    good.flatMap((s) => s.requestId ?? []),
    60_000,
  );
  const errors = load.samples.filter((s) => s.error !== null);
  log(`    ${load.samples.length} requests in ${load.elapsedS.toFixed(1)} s, ${errors.length} errors, ${recorded.missing} usage records missing\n`);
  return {
    sent: load.samples.length,
    errors: errors.length,
    firstError: errors[0]?.error ?? null,
    elapsedS: load.elapsedS,
    maxSendLagMs: load.maxSendLagMs,
    endToEndMs: good.map((s) => s.latencyMs),
    queueWaitMs: recorded.queueWaitMs,
    recordedLatencyMs: recorded.latencyMs,
    missingRecords: recorded.missing,
    cpu,
  };
}

/** Uploads a batch input file in one streamed POST. */
async function uploadInput(rig: Rig, spec: InputFileSpec): Promise<{ fileId: string; upload: BatchPhase['upload'] }> {
  const startedAt = performance.now();
  const { fileId, bytes } = await rig.api.upload(spec);
  const upload = { bytes, seconds: (performance.now() - startedAt) / 1000 };
  log(`    uploaded ${(bytes / 1e6).toFixed(1)} MB in ${upload.seconds.toFixed(1)} s\n`);
  return { fileId, upload };
}

/** What a phase does while a batch runs (once its lines have begun), and once it ended (before its output is read). */
interface BatchHooks {
  during?: (batchId: string) => Promise<void>;
  ended?: () => Promise<void>;
}

/** A batch created on an uploaded file, followed to its end; then its output file is read back. */
async function runUploaded(rig: Rig, input: { fileId: string; upload: BatchPhase['upload']; lines: number }, hooks: BatchHooks = {}): Promise<BatchPhase> {
  const meter = new CpuMeter(rig.pids);
  await meter.begin();
  const createdAt = performance.now();
  const id = await rig.api.create(input.fileId);
  let loggedAt = createdAt;
  let linesBegun: () => void = () => undefined;
  const begun = new Promise<void>((resolve) => (linesBegun = resolve));
  const following = rig.api.follow(id, createdAt, {
    pollMs: POLL_MS,
    timeoutS: settings.batchTimeoutS,
    onPoll: (batch) => {
      const { completed, failed, total } = batch.request_counts;
      if (completed + failed > 0 || (batch.status !== 'validating' && batch.status !== 'in_progress')) linesBegun();
      if (performance.now() - loggedAt < 10_000) return;
      loggedAt = performance.now();
      log(`    ${id}: ${batch.status}, ${completed + failed}/${total} lines after ${((loggedAt - createdAt) / 1000).toFixed(0)} s\n`);
    },
  });
  if (hooks.during) {
    await Promise.race([begun, following]);
    await hooks.during(id);
  }
  const run = await following;
  const cpu = await meter.end();
  await hooks.ended?.();
  log(`    ${id}: ${run.status} after ${run.endedS?.toFixed(1) ?? '—'} s (${run.completed} ok, ${run.failed} failed)\n`);
  const output = run.outputFileId === null ? null : await rig.api.checkOutput(run.outputFileId);
  return { lines: input.lines, upload: input.upload, run, output, cpu };
}

/** A batch of `spec`'s lines, uploaded and run to its end. */
async function runBatch(rig: Rig, spec: InputFileSpec, hooks: BatchHooks = {}): Promise<BatchPhase> {
  return runUploaded(rig, { ...(await uploadInput(rig, spec)), lines: spec.lines }, hooks);
}

/** The large input file: web and worker VmRSS before it, sampled through its upload, then through its run. */
async function memoryPhase(rig: Rig): Promise<MemoryPhase> {
  const sampler = new RssSampler(new Map([...rig.pids].filter(([name]) => name === 'web' || name === 'worker')));
  const spec: InputFileSpec = {
    lines: settings.memoryLines,
    model: MEMORY_MODEL,
    prefix: 'memory',
    maxTokens: TOKENS,
    lineBytes: Math.floor((settings.memoryMb * 1e6) / settings.memoryLines),
  };
  const before = await sampler.now();
  await sampler.start();
  const input = await uploadInput(rig, spec);
  const upload = await sampler.stop();
  await sampler.start();
  let run: RssSpan | null = null;
  const batch = await runUploaded(
    rig,
    { ...input, lines: spec.lines },
    {
      ended: async () => {
        run = await sampler.stop();
        await sampler.start();
      },
    },
  );
  const download = await sampler.stop();
  return { batch, before, upload, run: run ?? download, download };
}

/** The batches' tenant: an `app` key and limits that never refuse (the stack's tenant sends the interactive load). */
async function createBatchTenant(databaseUrl: string): Promise<BenchTenant> {
  const repository = createPostgresRepository(databaseUrl);
  try {
    const tenant = await repository.tenants.create({ id: `bench_batch_${randomBytes(4).toString('hex')}`, name: 'bench batches' });
    const key = generateApiKey();
    await repository.apiKeys.create({ id: key.id, tenantId: tenant.id, role: 'app', secretHash: key.secretHash });
    await repository.budgets.setPlan({ tenantId: tenant.id, ...FULL_PLAN });
    return { tenantId: tenant.id, apiKey: key.secret };
  } finally {
    await repository.close();
  }
}

async function main(): Promise<number> {
  log(`batch-lane: bounded to ${Math.round(budgetMs / 1000)} s\n`);
  const disarm = cleanups.guard(budgetMs);
  try {
    return await cleanups.scope(async () => {
      const report: LaneReport = { label: await describeCheckout(CHECKOUT), date: new Date().toISOString(), load: { start: await loadAverage() }, settings };
      log('starting a private Redis, database, web and one worker…\n');
      const { redisServer, stack } = await startAllFeaturesStack(cleanups, {
        root: undefined,
        connections: settings.workerConcurrency,
        models: simulatorModels,
        env: { WORKER_CONCURRENCY: String(settings.workerConcurrency), BATCH_SUPERVISE_INTERVAL_MS: String(settings.superviseMs), ...settings.batchEnv },
      });
      const db = new pg.Pool({ connectionString: stack.env.DATABASE_URL, max: 2 });
      cleanups.register(() => db.end());
      const tenant = await createBatchTenant(stack.env.DATABASE_URL as string);
      const api = new BatchApi(stack.gatewayUrl, tenant.apiKey);
      cleanups.register(() => api.close());
      const pids = new Map([
        ['web', stack.processes.web.child.pid as number],
        ['worker', stack.processes.workers[0]?.child.pid as number],
        ['redis', redisServer.pid],
        ['bench', process.pid],
      ]);
      const rig: Rig = { stack, db, api, pids };
      const short = (prefix: string, lines: number): InputFileSpec => ({ lines, model: MODEL, prefix, maxTokens: TOKENS });

      log('warm-up: 5 s of interactive load, a 200-line batch…\n');
      await interactive(rig, 5);
      await runBatch(rig, short('warm', 200));
      if (!settings.skipMemory) {
        log(`memory: a ${settings.memoryMb} MB input file of ${settings.memoryLines} lines, streamed up and run…\n`);
        report.memory = await memoryPhase(rig);
        // The large batch's aftermath (PostgreSQL writing its rows, checkpoints) must not fall in phase A.
        log(`settling for ${SETTLE_S} s…\n`);
        await new Promise((resolve) => setTimeout(resolve, SETTLE_S * 1000));
      }
      log(`phase A: ${settings.rate} requests/s for ${settings.seconds} s, no batch…\n`);
      report.a = await interactive(rig, settings.seconds);
      log(`phase B: a ${settings.lines}-line batch, and ${settings.rate} requests/s for ${settings.seconds} s once its lines run…\n`);
      report.batchB = await runBatch(rig, short('alongside', settings.lines), {
        during: async (batchId) => {
          const resulted = async () => {
            const { completed, failed } = (await api.get(batchId)).request_counts;
            return completed + failed;
          };
          const atStart = await resulted();
          report.b = await interactive(rig, settings.seconds);
          report.b.batchLines = { atStart, atEnd: await resulted() };
        },
      });
      log(`phase A′: ${settings.rate} requests/s for ${settings.seconds} s, the batch ended…\n`);
      report.a2 = await interactive(rig, settings.seconds);
      if (!settings.skipAlone) {
        log(`alone: a ${settings.lines}-line batch, no other load…\n`);
        report.alone = await runBatch(rig, short('alone', settings.lines));
      }

      report.load.end = await loadAverage();
      const { web, workers } = stack.processes;
      report.logs = summariseLogs([web, ...workers].map((p) => p.output()).join('\n'));
      process.stdout.write(`\n${formatReport(report)}\n`);
      if (settings.json) process.stdout.write(`${JSON.stringify(toJson(report))}\n`);
      // The ratio and memory goals are reported, not enforced: on a shared machine they move with its load.
      return verdicts(report).every((v) => v.kind !== 'correctness' || v.met !== false) ? 0 : 1;
    });
  } finally {
    disarm();
    await cleanups.unwind();
  }
}

runBench('batch-lane', cleanups, main);
