/**
 * What translation costs the worker: worker CPU per streamed completion through each provider adapter
 * (Anthropic, Gemini) against the OpenAI-compatible one, in one run on one stack. The bench upstream
 * (bench/upstream.ts) answers every format with the same 20 tokens and usage, so the adapters differ
 * only by what they parse and translate. The aliases take turns in rounds (ABC, BCA, CAB…), so that a
 * machine growing busier or quieter during the run weighs on each alike.
 *
 *   node bench/adapter-cpu.ts [--conns N] [--dur S] [--warm S] [--rounds R] [--json]
 *
 * Defaults: --conns 16, --dur 6, --warm 1, --rounds 3. The target of issue 9: each translating
 * adapter at most 1.2 × the OpenAI-compatible one's worker CPU per completion.
 */
import { parseArgs } from 'node:util';
import type { CatalogModel } from '../src/domain/catalog/schema.ts';
import { BENCH_MODEL, startStack, type BenchStack } from './stack.ts';
import { runClosedLoop } from './closed-loop.ts';
import { readCpuSeconds } from './proc-stats.ts';
import { CleanupStack, runBench } from './cleanup-stack.ts';
import { num, ratio, table } from './report-format.ts';

const ADAPTERS = [
  { name: 'openai-compatible', alias: BENCH_MODEL },
  { name: 'anthropic', alias: 'bench-claude' },
  { name: 'gemini', alias: 'bench-gemini' },
] as const;
type AdapterName = (typeof ADAPTERS)[number]['name'];

/** The same prices and limits as BENCH_MODEL, on the upstream's other formats. */
function translatedModels(upstreamUrl: string): Record<string, CatalogModel> {
  const origin = upstreamUrl.replace(/\/v1$/, '');
  const common = {
    upstream_model: 'bench-upstream-model',
    base_url: origin,
    context_window: 8192,
    max_output_tokens: 1024,
    input_price_per_mtok: 1,
    output_price_per_mtok: 2,
  };
  return { 'bench-claude': { provider: 'anthropic', ...common }, 'bench-gemini': { provider: 'gemini', ...common } };
}

function readSettings() {
  const { values } = parseArgs({
    options: {
      conns: { type: 'string', default: '16' },
      dur: { type: 'string', default: '6' },
      warm: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      json: { type: 'boolean', default: false },
    },
  });
  const int = (name: string, raw: string, min: number, max: number) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be an integer in [${min}, ${max}]; got ${raw}`);
    return value;
  };
  return {
    connections: int('conns', values.conns, 1, 256),
    durS: int('dur', values.dur, 1, 60),
    warmS: int('warm', values.warm, 0, 30),
    rounds: int('rounds', values.rounds, 1, 10),
    json: values.json,
  };
}

/** One adapter's totals over every round. */
interface Tally {
  completed: number;
  workerCpuS: number;
  windowS: number;
  errors: number;
  firstError: string | null;
}

// Every adapter streams the 20 tokens and the usage chunk; OpenAI's upstream puts the finish reason on
// the last token's chunk, the others in a chunk of their own.
function checkStream(status: number, text: string): void {
  if (status !== 200) throw new Error(`status ${status}: ${text.slice(0, 200)}`);
  const frames = text.split('\n\n').filter((frame) => frame !== '');
  const tokens = frames.filter((frame) => frame.includes('"content":"tok')).length;
  if (tokens !== 20 || !frames.at(-2)?.includes('"usage":{') || !frames.at(-1)?.endsWith('data: [DONE]'))
    throw new Error(`not a whole stream: ${text.slice(0, 200)}`);
}

async function measure(stack: BenchStack, alias: string, settings: ReturnType<typeof readSettings>, into: Tally): Promise<void> {
  const worker = stack.processes.workers[0]?.child.pid as number;
  const body = JSON.stringify({
    model: alias,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: 64,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello to the benchmark.' },
    ],
  });
  const result = await runClosedLoop({
    url: `${stack.gatewayUrl}/chat/completions`,
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body,
    stream: true,
    check: checkStream,
    connections: settings.connections,
    warmS: settings.warmS,
    durS: settings.durS,
    probe: () => readCpuSeconds(worker),
  });
  into.completed += result.completed;
  into.workerCpuS += result.after - result.before;
  into.windowS += result.windowS;
  into.errors += result.errors;
  into.firstError ??= result.firstError;
}

function report(tallies: Map<AdapterName, Tally>, settings: ReturnType<typeof readSettings>): string {
  const perCompletion = (t: Tally) => (t.completed > 0 ? (t.workerCpuS * 1e6) / t.completed : undefined);
  const base = perCompletion(tallies.get('openai-compatible') as Tally);
  const rows = ADAPTERS.map(({ name }) => {
    const t = tallies.get(name) as Tally;
    const us = perCompletion(t);
    return [name, num(t.completed / t.windowS, 0), num(us, 0), num(ratio(base, us), 2), String(t.errors)];
  });
  return [
    `Worker CPU per streamed completion (20 tokens, usage included), ${settings.connections} connections, ${settings.rounds} rounds of ${settings.durS} s per adapter:`,
    '',
    table(['adapter', 'completions/s', 'worker CPU µs per completion', '÷ openai-compatible', 'errors'], rows),
    '',
    'Target: each translating adapter ≤ 1.20 × openai-compatible.',
  ].join('\n');
}

const settings = readSettings();
const cleanups = new CleanupStack('adapter-cpu');
const disarm = cleanups.guard((ADAPTERS.length * settings.rounds * (settings.durS + settings.warmS + 5) + 120) * 1000);

async function main(): Promise<number> {
  const stack = await startStack({
    redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
    workers: 1,
    workerConcurrency: settings.connections * 2,
    upstreamConnections: settings.connections * 2,
    nodeOptions: { web: '', worker: process.env.ADAPTER_CPU_WORKER_NODE_OPTIONS ?? '' },
    env: { TENANT_RPM: '0', TENANT_TPM: '0', KEY_RPM: '0', KEY_TPM: '0' },
    models: translatedModels,
  });
  cleanups.register(() => stack.close());
  const tallies = new Map<AdapterName, Tally>(ADAPTERS.map(({ name }) => [name, { completed: 0, workerCpuS: 0, windowS: 0, errors: 0, firstError: null }]));
  for (let round = 0; round < settings.rounds; round++) {
    for (let i = 0; i < ADAPTERS.length; i++) {
      const adapter = ADAPTERS[(round + i) % ADAPTERS.length] as (typeof ADAPTERS)[number];
      process.stderr.write(`round ${round + 1}: ${adapter.name} … `);
      await measure(stack, adapter.alias, settings, tallies.get(adapter.name) as Tally);
      process.stderr.write('done\n');
    }
  }
  await cleanups.unwind();
  disarm();
  for (const [name, t] of tallies) if (t.errors > 0) process.stderr.write(`${name}: ${t.errors} errors, first: ${t.firstError}\n`);
  process.stdout.write(settings.json ? `${JSON.stringify(Object.fromEntries(tallies), null, 2)}\n` : `${report(tallies, settings)}\n`);
  return [...tallies.values()].some((t) => t.errors > 0 || t.completed === 0) ? 1 : 0;
}

runBench('adapter-cpu', cleanups, main);
