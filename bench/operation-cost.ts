/**
 * What each operation costs per request against a chat completion, in one run on one stack: chat,
 * Anthropic's Messages (translated to the OpenAI-compatible upstream, and native to its /v1/messages),
 * OpenAI's Responses, each non-streamed and streamed, and embeddings. Every case goes through the one
 * admission chain with every feature on (bench/all-features.ts: API key, rate limits that never
 * refuse, a budget policy, PII `flag`) and a private redis-server, so that its INFO counters are the
 * run's alone. Per request: web and worker CPU (/proc), Redis commands, script calls and CPU (INFO),
 * each with its ratio to chat of the same streaming mode (embeddings: non-streamed chat). The cases
 * take turns, forward in odd rounds and backward in even ones, so that drift weighs on each alike.
 *
 *   node bench/operation-cost.ts [--conns N] [--dur S] [--warm S] [--rounds R] [--cases a,b,…] [--json]
 *
 * Defaults: --conns 32, --dur 5, --warm 2, --rounds 2, every case (~2½ minutes on 2 cores).
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { WrittenCatalog } from '../src/domain/catalog/schema.ts';
import { BENCH_MODEL, type BenchStack } from './stack.ts';
import { gatewayHeaders, startAllFeaturesStack } from './all-features.ts';
import { checkAnswer } from './sequential.ts';
import { describeCheckout } from './base-worktree.ts';
import { summariseLogs } from './child-logs.ts';
import { CleanupStack, runBench } from './cleanup-stack.ts';
import { num, table } from './report-format.ts';
import {
  costHeader,
  costRow,
  emptyTally,
  inRoundOrder,
  LOAD_OPTIONS,
  measure,
  prime,
  readLoadSettings,
  summarise,
  type LoadSettings,
  type LoopRequest,
  type RequestCost,
  type Tally,
} from './request-cost.ts';

const CLAUDE_MODEL = 'bench-claude';
const EMBED_MODEL = 'bench-embed';
// What bench/upstream.ts answers (importing it would start its server): 20 tokens; 32 floats per vector.
const TOKENS = 20;
const DIMENSIONS = 32;
const SYSTEM = 'You are terse.';
const USER = 'Say hello to the benchmark.';

/** An Anthropic model on the bench upstream's /v1/messages, and an embeddings model on its /v1/embeddings. */
function operationModels(upstreamUrl: string): WrittenCatalog['models'] {
  const common = { upstream_model: 'bench-upstream-model', context_window: 8192, input_price_per_mtok: 1 };
  return {
    // Anthropic's base URL is the origin: the adapter adds /v1/messages.
    [CLAUDE_MODEL]: { provider: 'anthropic', base_url: upstreamUrl.replace(/\/v1$/, ''), max_output_tokens: 1024, output_price_per_mtok: 2, ...common },
    [EMBED_MODEL]: { provider: 'openai-compatible', mode: 'embeddings', base_url: upstreamUrl, ...common },
  };
}

function fail(what: string, text: string): never {
  throw new Error(`${what}: ${text.slice(0, 200)}`);
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

// The native path relays the upstream's message id as sent; the translation makes its own (`msg_…`).
function checkRoute(text: string, native: boolean): void {
  if (text.includes('"id":"chatcmpl-bench') !== native) fail(native ? 'not relayed from /v1/messages' : 'not translated', text);
}

function checkMessage(status: number, text: string, native: boolean): void {
  if (status !== 200) fail(`status ${status}`, text);
  if (!text.includes('"type":"message"') || !text.includes(`tok${TOKENS - 1} `) || !text.includes(`"output_tokens":${TOKENS}`))
    fail('not a whole message', text);
  checkRoute(text, native);
}

function checkMessageStream(status: number, text: string, native: boolean): void {
  if (status !== 200) fail(`status ${status}`, text);
  if (count(text, '"type":"text_delta"') !== TOKENS || !text.includes(`"output_tokens":${TOKENS}`) || !text.trimEnd().endsWith('data: {"type":"message_stop"}'))
    fail('not a whole message stream', text);
  checkRoute(text, native);
}

function checkResponse(status: number, text: string): void {
  if (status !== 200) fail(`status ${status}`, text);
  if (
    !text.includes('"object":"response"') ||
    !text.includes('"status":"completed"') ||
    !text.includes(`tok${TOKENS - 1} `) ||
    !text.includes(`"output_tokens":${TOKENS}`)
  )
    fail('not a whole response', text);
}

function checkResponseStream(status: number, text: string): void {
  if (status !== 200) fail(`status ${status}`, text);
  const last = text.trimEnd().split('\n\n').at(-1) ?? '';
  if (
    count(text, 'event: response.output_text.delta\n') !== TOKENS ||
    !last.startsWith('event: response.completed\n') ||
    !last.includes(`"output_tokens":${TOKENS}`)
  )
    fail('not a whole response stream', text);
}

function checkEmbeddings(status: number, text: string): void {
  if (status !== 200) fail(`status ${status}`, text);
  const vector = /"embedding":\[([^\]]*)\]/.exec(text)?.[1];
  if (
    !text.includes('"object":"list"') ||
    count(text, '"embedding":') !== 1 ||
    vector?.split(',').length !== DIMENSIONS ||
    !text.includes('"prompt_tokens":12')
  )
    fail('not one embedding with usage', text);
}

/** One kind of request: where it goes, what it sends and how its answer is checked. */
interface Case {
  name: string;
  path: 'chat/completions' | 'messages' | 'responses' | 'embeddings';
  stream: boolean;
  body: Record<string, unknown>;
  check: (status: number, text: string) => void;
}

const chatBody = {
  model: BENCH_MODEL,
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: USER },
  ],
  max_tokens: 64,
};
const messagesBody = (model: string) => ({ model, max_tokens: 64, system: SYSTEM, messages: [{ role: 'user', content: USER }] });
const responsesBody = { model: BENCH_MODEL, instructions: SYSTEM, input: USER, max_output_tokens: 64 };
const streamed = (body: Record<string, unknown>) => ({ ...body, stream: true });

/** Every case, the two chat references first. */
const CASES: readonly Case[] = [
  { name: 'chat', path: 'chat/completions', stream: false, body: chatBody, check: (s, t) => checkAnswer(s, t, false) },
  {
    name: 'chat-stream',
    path: 'chat/completions',
    stream: true,
    body: { ...streamed(chatBody), stream_options: { include_usage: true } },
    check: (s, t) => checkAnswer(s, t, true),
  },
  { name: 'messages', path: 'messages', stream: false, body: messagesBody(BENCH_MODEL), check: (s, t) => checkMessage(s, t, false) },
  { name: 'messages-stream', path: 'messages', stream: true, body: streamed(messagesBody(BENCH_MODEL)), check: (s, t) => checkMessageStream(s, t, false) },
  { name: 'messages-native', path: 'messages', stream: false, body: messagesBody(CLAUDE_MODEL), check: (s, t) => checkMessage(s, t, true) },
  {
    name: 'messages-native-stream',
    path: 'messages',
    stream: true,
    body: streamed(messagesBody(CLAUDE_MODEL)),
    check: (s, t) => checkMessageStream(s, t, true),
  },
  { name: 'responses', path: 'responses', stream: false, body: responsesBody, check: checkResponse },
  { name: 'responses-stream', path: 'responses', stream: true, body: streamed(responsesBody), check: checkResponseStream },
  { name: 'embeddings', path: 'embeddings', stream: false, body: { model: EMBED_MODEL, input: USER }, check: checkEmbeddings },
];

const referenceOf = (c: Case) => (c.stream ? 'chat-stream' : 'chat');

function readSettings() {
  const { values } = parseArgs({ options: { ...LOAD_OPTIONS, cases: { type: 'string', default: CASES.map((c) => c.name).join(',') } } });
  const names = values.cases.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !CASES.some((c) => c.name === name));
  if (unknown.length > 0) throw new Error(`--cases: unknown ${unknown.join(', ')}; known: ${CASES.map((c) => c.name).join(', ')}`);
  return { ...readLoadSettings(values), cases: CASES.filter((c) => names.includes(c.name)) };
}
type Settings = ReturnType<typeof readSettings>;

/** The closed loop of a case, its window and probe aside. */
function load(stack: BenchStack, c: Case, settings: LoadSettings): LoopRequest {
  return {
    url: `${stack.gatewayUrl}/${c.path}`,
    headers: gatewayHeaders(stack),
    body: JSON.stringify(c.body),
    stream: c.stream,
    check: c.check,
    connections: settings.connections,
  };
}

/** Per request figures of one case, with the case its ratios are to. */
type CaseResult = RequestCost & { stream: boolean; reference: string };

function report(results: Map<string, CaseResult>, settings: Settings, label: string): string {
  const rows = [...results].map(([name, r]) => costRow(name, r, name === r.reference ? null : results.get(r.reference)));
  // The commands with the most calls in any case, per request.
  const top = new Set([...results.values()].flatMap((r) => Object.keys(r.byCommand).slice(0, 6)));
  const commandRows = [...top].map((command) => [command, ...[...results.values()].map((r) => num(r.byCommand[command] ?? 0, 2))]);
  return [
    `Cost per request at ${label}, ${settings.connections} connections, ${settings.rounds} round(s) of ${settings.durS} s per case after ${settings.warmS} s of warm-up; every feature on, a private Redis.`,
    'CPU µs per request (web, worker, Redis); ÷ chat is the ratio to chat of the same streaming mode (embeddings: non-streamed chat); other % is busy time of the machine outside these processes and the upstream and the load generator, in % of one core.',
    '',
    table(costHeader('case', 'chat'), rows),
    '',
    'Redis calls per request by command (the top 6 of each case):',
    '',
    table(['command', ...results.keys()], commandRows),
  ].join('\n');
}

const settings = (() => {
  try {
    return readSettings();
  } catch (error) {
    process.stderr.write(
      `${error instanceof Error ? error.message : String(error)}\nusage: node bench/operation-cost.ts [--conns N] [--dur S] [--warm S] [--rounds R] [--cases a,b,…] [--json]\n`,
    );
    process.exit(2);
  }
})();
const cleanups = new CleanupStack('operation-cost');
// Start-up, the priming, then each cell's warm-up, window and drain, then the clean-up.
const budgetMs = (90 + settings.cases.length * (settings.warmS + 5 + settings.rounds * (settings.warmS + settings.durS + 10)) + 30) * 1000;

/** Loads every case in turn, round after round, and returns each one's totals and what web and worker logged. */
async function measureAll(): Promise<{ label: string; tallies: Map<string, Tally>; logs: string }> {
  const label = await describeCheckout(fileURLToPath(new URL('../', import.meta.url)));
  const { redisServer, stack } = await startAllFeaturesStack(cleanups, { root: undefined, connections: settings.connections, models: operationModels });
  const monitor = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  cleanups.register(async () => monitor.disconnect());
  const tallies = new Map(settings.cases.map((c) => [c.name, emptyTally()]));
  // Every path warmed before any window opens, so that the first case measured is not charged for the processes' warm-up.
  process.stderr.write(`  priming every case for ${Math.max(1, settings.warmS)} s…\n`);
  for (const c of settings.cases) await prime(load(stack, c, settings), settings, tallies.get(c.name) as Tally);
  for (let round = 1; round <= settings.rounds; round++) {
    for (const c of inRoundOrder(settings.cases, round)) {
      process.stderr.write(`  round ${round} ${c.name} ×${settings.connections} … `);
      const tally = tallies.get(c.name) as Tally;
      const [errorsBefore, completedBefore] = [tally.errors, tally.completed];
      await measure(stack, monitor, load(stack, c, settings), settings, tally);
      process.stderr.write(`${tally.completed - completedBefore} requests, ${tally.errors - errorsBefore} errors\n`);
    }
  }
  const { web, workers } = stack.processes;
  return { label, tallies, logs: summariseLogs([web, ...workers].map((p) => p.output()).join('\n')) };
}

async function main(): Promise<number> {
  process.stderr.write(`operation-cost: bounded to ${Math.round(budgetMs / 1000)} s; starting a private Redis, upstream, database, web and worker…\n`);
  const disarm = cleanups.guard(budgetMs);
  let measured: Awaited<ReturnType<typeof measureAll>>;
  try {
    measured = await measureAll();
  } finally {
    disarm();
    await cleanups.unwind();
  }
  const { label, tallies, logs } = measured;
  const results = new Map(
    settings.cases.map((c): [string, CaseResult] => [c.name, { stream: c.stream, reference: referenceOf(c), ...summarise(tallies.get(c.name) as Tally) }]),
  );
  for (const [name, r] of results) if (r.errors > 0) process.stderr.write(`${name}: ${r.errors} errors, first: ${r.firstError}\n`);
  process.stdout.write(`\n${report(results, settings, label)}\n`);
  if (logs !== '') process.stdout.write(`\nweb/worker log lines at warn and above (count × process level message):\n${logs}\n`);
  if (settings.json) {
    const { cases, json: _json, ...rest } = settings;
    process.stdout.write(
      `${JSON.stringify({ checkout: label, settings: { ...rest, cases: cases.map((c) => c.name) }, cases: Object.fromEntries(results) })}\n`,
    );
  }
  return [...results.values()].some((r) => r.errors > 0 || r.completed === 0) ? 1 : 0;
}

runBench('operation-cost', cleanups, main);
