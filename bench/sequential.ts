/**
 * Concurrency-1 timings with sub-millisecond resolution (autocannon reports whole milliseconds):
 * requests alternate between targets, one at a time, over one keep-alive connection per target.
 */
import { Pool } from 'undici';

/** One endpoint and the request to send it. */
export interface SequentialTarget {
  name: string;
  /** Base URL ending in /v1. */
  baseUrl: string;
  headers: Record<string, string>;
  body: string;
  /** Headers that must differ on every request (e.g. a fresh Idempotency-Key), added to `headers`. */
  freshHeaders?: () => Record<string, string>;
}

/** Timings of one target, in ms; for streams `firstTokenMs` is the time to the first content chunk. */
export interface SequentialSamples {
  totalMs: number[];
  firstTokenMs: number[];
  errors: number;
  /** The first error seen, for the report. */
  firstError: string | null;
}

/** Frames a streamed answer must have: 20 content chunks, the usage chunk, [DONE]. */
const EXPECTED_STREAM_FRAMES = 22;

async function timeOne(pool: Pool, target: SequentialTarget, stream: boolean): Promise<{ totalMs: number; firstTokenMs: number }> {
  const headers = target.freshHeaders ? { ...target.headers, ...target.freshHeaders() } : target.headers;
  const startedAt = performance.now();
  const response = await pool.request({ path: new URL(`${target.baseUrl}/chat/completions`).pathname, method: 'POST', headers, body: target.body });
  let firstTokenMs = Number.NaN;
  let text = '';
  for await (const part of response.body) {
    text += (part as Buffer).toString('utf8');
    if (Number.isNaN(firstTokenMs) && text.includes('"content"')) firstTokenMs = performance.now() - startedAt;
  }
  const totalMs = performance.now() - startedAt;
  checkAnswer(response.statusCode, text, stream);
  return { totalMs, firstTokenMs };
}

/**
 * Throws unless an answer is a 200 completion: with `stream`, the upstream's 20 content chunks, the
 * usage chunk and `[DONE]` (the request must ask for usage); otherwise a body with `choices`.
 */
export function checkAnswer(status: number, text: string, stream: boolean): void {
  if (status !== 200) throw new Error(`status ${status}: ${text.slice(0, 200)}`);
  if (stream) {
    // The gateway numbers its events (`id: <seq>` before the data line, for Last-Event-ID resumes); the direct upstream does not.
    const frames = text
      .split('\n\n')
      .filter((frame) => frame !== '')
      .map((frame) => frame.replace(/^id: \d+\n/, ''));
    if (frames.length !== EXPECTED_STREAM_FRAMES || frames.at(-1) !== 'data: [DONE]')
      throw new Error(`stream had ${frames.length} frames: ${text.slice(0, 200)}`);
  } else if (!text.includes('"choices"')) {
    throw new Error(`not a completion: ${text.slice(0, 200)}`);
  }
}

/**
 * Sends `warmup` then `count` requests to each target, alternating so both see the same machine state;
 * stops early (with what it has) once `deadlineMs` has passed.
 */
export async function measureSequential(
  targets: SequentialTarget[],
  options: { stream: boolean; warmup: number; count: number; deadlineMs: number },
): Promise<Map<string, SequentialSamples>> {
  const deadline = Date.now() + options.deadlineMs;
  const pools = new Map(targets.map((t) => [t.name, new Pool(new URL(t.baseUrl).origin, { connections: 1, headersTimeout: 10_000, bodyTimeout: 10_000 })]));
  const samples = new Map(targets.map((t): [string, SequentialSamples] => [t.name, { totalMs: [], firstTokenMs: [], errors: 0, firstError: null }]));
  try {
    for (let i = 0; i < options.warmup + options.count && Date.now() < deadline; i++) {
      for (const target of targets) {
        const into = samples.get(target.name) as SequentialSamples;
        try {
          const timing = await timeOne(pools.get(target.name) as Pool, target, options.stream);
          if (i < options.warmup) continue;
          into.totalMs.push(timing.totalMs);
          if (options.stream) into.firstTokenMs.push(timing.firstTokenMs);
        } catch (error) {
          into.errors++;
          into.firstError ??= (error as Error).message;
        }
      }
    }
  } finally {
    await Promise.all([...pools.values()].map((pool) => pool.close()));
  }
  return samples;
}

/** The nearest-rank percentile (0–100) of unsorted samples; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}
