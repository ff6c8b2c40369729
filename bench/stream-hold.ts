/**
 * Memory under many long-lived streams: whether web, worker and Redis stay at the same resident
 * memory while the gateway holds --streams streamed chat completions open for --minutes minutes.
 * A leak per stream (a listener, a buffer, a Redis key or consumer left behind) grows with streams
 * served, so it shows over minutes of steady load where a short bench sees only the warm-up.
 *
 *   node bench/stream-hold.ts [--streams 256] [--minutes 10] [--chunk-ms 200] [--chunks 50] [--json]
 *
 * One stack as the other benches start it (a private redis-server, a fresh database, one web and one
 * worker process with their shipped heap flags, every admission feature on). The upstream is
 * test/helpers/fake-upstream.ts in this process, told to answer every call as a slow stream:
 * --chunks content chunks --chunk-ms apart (bench/upstream.ts answers at once, and a stream that ends
 * in microseconds holds nothing open). Each of --streams client loops opens a stream, reads it to
 * `data: [DONE]`, checks its content, usage and end, and opens the next at once; the loops start
 * spread over one stream's length, so that streams end and open evenly rather than all together.
 *
 * A line after the warm-up, at the end of every minute and once the streams drained: VmRSS of each
 * process, streams completed and failed, streams open, CPU seconds of each process since the line
 * before. Then each process from minute 1 to the last, and `flat: yes|no`: web+worker grew by at most
 * 5 % (or 20 MiB) from the end of minute 2 to the end. With --json, the lines go to stderr and stdout
 * holds one JSON object. The exit code is 1 when a stream failed; a growth is reported, not failed on.
 */
import { parseArgs } from 'node:util';
import { readFile } from 'node:fs/promises';
import { Pool } from 'undici';
import { HEAP_FLAGS } from '../src/heap-flags.ts';
import { startFakeUpstream, type Behaviour } from '../test/helpers/fake-upstream.ts';
import { gatewayHeaders, requestBody, startAllFeaturesStack } from './all-features.ts';
import { CleanupStack, runBench } from './cleanup-stack.ts';
import { readCpuSeconds } from './proc-stats.ts';
import { RssSampler } from './rss-sampler.ts';
import { summariseLogs } from './child-logs.ts';
import type { GatewayProcess } from '../test/helpers/gateway-processes.ts';
import { PROCESSES, formatSummary, headerLine, sampleLine, toJson, type ProcessName, type Sample, type Settings } from './stream-hold-report.ts';
import { settingsOrExit } from './settings-or-exit.ts';

const PACED_MODEL = 'bench-paced';
const USAGE = 'usage: node bench/stream-hold.ts [--streams 256] [--minutes 10] [--chunk-ms 200] [--chunks 50] [--json]';
/** Each integer option: its default, least and greatest value (a stream's tokens stay under the model's 1,024). */
const INTEGER_OPTIONS = {
  streams: [256, 1, 2_048],
  minutes: [10, 1, 240],
  'chunk-ms': [200, 1, 10_000],
  chunks: [50, 1, 1_000],
} as const satisfies Record<string, readonly [number, number, number]>;

function readSettings(): Settings {
  const options = Object.fromEntries(
    Object.entries(INTEGER_OPTIONS).map(([name, [fallback]]) => [name, { type: 'string' as const, default: String(fallback) }]),
  );
  const { values } = parseArgs({ options: { ...options, json: { type: 'boolean', default: false } } }) as { values: Record<string, string | boolean> };
  const int = (name: keyof typeof INTEGER_OPTIONS) => {
    const [, min, max] = INTEGER_OPTIONS[name];
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < min || value > max)
      throw new Error(`--${name} must be an integer in [${min}, ${max}]; got ${String(values[name])}`);
    return value;
  };
  const chunkMs = int('chunk-ms');
  const chunks = int('chunks');
  // Every loop has opened its first stream and most have finished one; under a minute, so minute 1 comes after it.
  const warmS = Math.min(45, Math.ceil((2 * chunks * chunkMs) / 1000) + 5);
  return { streams: int('streams'), minutes: int('minutes'), chunkMs, chunks, warmS, json: values.json === true };
}

const settings = settingsOrExit(readSettings, USAGE);
const streamMs = settings.chunks * settings.chunkMs;
// Start-up, the load, the drain of the last streams, the clean-up.
const budgetMs = (240 + settings.minutes * 60 + (3 * streamMs) / 1000) * 1000;
const cleanups = new CleanupStack('stream-hold');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
/** The lines as they come: on stdout, or on stderr when stdout is kept for the JSON. */
const say = (text: string) => (settings.json ? process.stderr : process.stdout).write(`${text}\n`);

/** What the client loops share. */
interface Load {
  stopping: boolean;
  completed: number;
  failures: number;
  open: number;
  byMessage: Map<string, number>;
}

/** The expected answer of the fake's slow stream: `w0 w1 … ` one word a chunk. */
const EXPECTED_TEXT = Array.from({ length: settings.chunks }, (_, i) => `w${i} `).join('');

/** Reads one stream to its end; throws unless it is a 200 SSE answer of the expected chunks, with usage, ended by [DONE]. */
async function holdStream(pool: Pool, path: string, headers: Record<string, string>, body: string): Promise<void> {
  const response = await pool.request({ path, method: 'POST', headers, body });
  if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${(await response.body.text()).slice(0, 160)}`);
  const decoder = new TextDecoder();
  let pending = '';
  let text = '';
  let contentChunks = 0;
  let finishReason: unknown = null;
  let usage = false;
  let done = false;
  for await (const part of response.body) {
    pending += decoder.decode(part as Buffer, { stream: true });
    for (let end = pending.indexOf('\n\n'); end >= 0; end = pending.indexOf('\n\n')) {
      const frame = pending.slice(0, end);
      pending = pending.slice(end + 2);
      // The gateway numbers its events (`id: <seq>`) and may send comments; only `data:` lines carry the answer.
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (data === '') continue;
      if (done) throw new Error(`event after [DONE]: ${data.slice(0, 160)}`);
      if (data === '[DONE]') {
        done = true;
        continue;
      }
      const event = JSON.parse(data) as { error?: unknown; usage?: unknown; choices?: Array<{ delta?: { content?: unknown }; finish_reason?: unknown }> };
      if (event.error !== undefined) throw new Error(`error event: ${data.slice(0, 160)}`);
      if (event.usage) usage = true;
      const choice = event.choices?.[0];
      if (typeof choice?.delta?.content === 'string' && choice.delta.content !== '') {
        contentChunks++;
        text += choice.delta.content;
      }
      if (choice?.finish_reason) finishReason = choice.finish_reason;
    }
  }
  if (!done) throw new Error(`stream ended without [DONE] after ${contentChunks} content chunks`);
  if (contentChunks !== settings.chunks || text !== EXPECTED_TEXT)
    throw new Error(`stream had ${contentChunks} content chunks (${text.length} characters), not ${settings.chunks}`);
  if (finishReason !== 'stop' || !usage) throw new Error(`stream ended with finish_reason ${String(finishReason)}, usage ${usage ? 'sent' : 'missing'}`);
}

/** One client loop: waits `delayMs`, then holds one stream after the other until the load stops. */
async function clientLoop(load: Load, delayMs: number, open: () => Promise<void>): Promise<void> {
  await sleep(delayMs);
  while (!load.stopping) {
    load.open++;
    try {
      await open();
      load.completed++;
    } catch (error) {
      load.failures++;
      const message = (error instanceof Error ? error.message : String(error)).slice(0, 160);
      load.byMessage.set(message, (load.byMessage.get(message) ?? 0) + 1);
      await sleep(100); // a refusing gateway must not turn the loop into a busy spin
    } finally {
      load.open--;
    }
  }
}

/** The node flags of a process's command line; throws unless it holds every one of HEAP_FLAGS. */
async function heapFlagsOf(name: string, proc: GatewayProcess): Promise<string[]> {
  const argv = (await readFile(`/proc/${proc.child.pid}/cmdline`, 'utf8')).split('\0');
  const missing = HEAP_FLAGS.filter((flag) => !argv.includes(flag));
  if (missing.length > 0) throw new Error(`${name} runs without ${missing.join(' ')}: ${argv.join(' ')}`);
  return argv.filter((arg) => arg.startsWith('--max-'));
}

async function main(): Promise<number> {
  const disarm = cleanups.guard(budgetMs);
  process.stderr.write(`stream-hold: bounded to ${Math.round(budgetMs / 1000)} s; starting the paced upstream, a private Redis, a database, web and worker…\n`);
  try {
    const paced: Behaviour = { kind: 'slow-stream', chunkDelayMs: settings.chunkMs, chunks: settings.chunks };
    const upstream = await startFakeUpstream();
    cleanups.register(() => upstream.close());
    upstream.answerByDefault(paced);
    const { redisServer, stack } = await startAllFeaturesStack(cleanups, {
      root: undefined,
      connections: settings.streams,
      models: () => ({
        [PACED_MODEL]: {
          provider: 'openai-compatible',
          upstream_model: 'bench-paced-upstream',
          base_url: upstream.url,
          context_window: 8192,
          max_output_tokens: 1024,
          input_price_per_mtok: 1,
          output_price_per_mtok: 2,
        },
      }),
    });
    const { web, workers } = stack.processes;
    const worker = workers[0] as GatewayProcess;
    const heapFlags = { web: await heapFlagsOf('web', web), worker: await heapFlagsOf('worker', worker) };
    const pids = new Map<ProcessName, number>([
      ['web', web.child.pid as number],
      ['worker', worker.child.pid as number],
      ['redis', redisServer.pid],
    ]);
    const rss = new RssSampler(pids);
    const base = JSON.parse(requestBody(true)) as { max_tokens: number };
    const body = JSON.stringify({ ...base, model: PACED_MODEL, max_tokens: Math.max(base.max_tokens, settings.chunks) });
    const url = new URL(`${stack.gatewayUrl}/chat/completions`);
    const headers = gatewayHeaders(stack);
    // One connection a stream; the body timeout is the longest silence inside one.
    const pool = new Pool(url.origin, {
      connections: settings.streams,
      pipelining: 1,
      headersTimeout: 60_000,
      bodyTimeout: Math.max(30_000, 10 * settings.chunkMs),
    });
    cleanups.register(() => pool.close());
    say(
      `stream-hold: ${settings.streams} streams of ${settings.chunks} chunks ${settings.chunkMs} ms apart (${(streamMs / 1000).toFixed(1)} s each) for ${settings.minutes} min; ` +
        `web ${heapFlags.web.join(' ')}, worker ${heapFlags.worker.join(' ')}; first line after a ${settings.warmS} s warm-up`,
    );

    const load: Load = { stopping: false, completed: 0, failures: 0, open: 0, byMessage: new Map() };
    const startedAt = performance.now();
    let cpuBefore = await readCpu(pids);
    const loops = Array.from({ length: settings.streams }, (_, i) =>
      clientLoop(load, (i * streamMs) / settings.streams, () => holdStream(pool, url.pathname, headers, body)),
    );
    const samples: Sample[] = [];
    const take = async (label: string, minute: number | null) => {
      for (const [name, proc] of [['web', web] as const, ['worker', worker] as const])
        if (proc.child.exitCode !== null || proc.child.signalCode !== null) throw new Error(`${name} exited:\n${proc.output().slice(-2000)}`);
      const [rssKb, cpuNow] = await Promise.all([rss.now(), readCpu(pids)]);
      const cpuS = Object.fromEntries(PROCESSES.map((name) => [name, cpuNow[name] - cpuBefore[name]])) as Record<ProcessName, number>;
      cpuBefore = cpuNow;
      const sample: Sample = {
        label,
        minute,
        atS: (performance.now() - startedAt) / 1000,
        rssKb: rssKb as Record<ProcessName, number>,
        completed: load.completed,
        failures: load.failures,
        open: load.open,
        cpuS,
      };
      samples.push(sample);
      if (samples.length === 1) say(headerLine());
      say(sampleLine(sample));
      // The fake upstream records every call; forgotten here, its memory stays as flat as it lets the gateway's be.
      upstream.reset();
      upstream.answerByDefault(paced);
    };
    try {
      await sleep(startedAt + settings.warmS * 1000 - performance.now());
      await take('warm', 0);
      for (let minute = 1; minute <= settings.minutes; minute++) {
        await sleep(startedAt + minute * 60_000 - performance.now());
        cleanups.throwIfStopping();
        await take(String(minute), minute);
      }
    } finally {
      load.stopping = true;
      await Promise.all(loops);
    }
    await take('drained', null);

    const failures = { count: load.failures, byMessage: Object.fromEntries(load.byMessage) };
    const logs = summariseLogs([web, worker].map((p) => p.output()).join('\n'));
    say(formatSummary(settings, samples, failures, logs));
    if (settings.json) process.stdout.write(`${JSON.stringify(toJson(settings, heapFlags, samples, failures, logs))}\n`);
    return load.failures === 0 ? 0 : 1;
  } finally {
    disarm();
    await cleanups.unwind();
  }
}

/** CPU seconds each process has used so far. */
async function readCpu(pids: ReadonlyMap<ProcessName, number>): Promise<Record<ProcessName, number>> {
  return Object.fromEntries(await Promise.all([...pids].map(async ([name, pid]) => [name, await readCpuSeconds(pid)] as const))) as Record<ProcessName, number>;
}

runBench('stream-hold', cleanups, main);
