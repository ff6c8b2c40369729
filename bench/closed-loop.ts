/**
 * Closed-loop load with a measured window inside it: each of N keep-alive connections (undici) sends
 * its next request as soon as the previous answer ended, without pause across the window's edges,
 * so the window sees the steady state with as much work in flight at its end as at its start.
 * A probe (e.g. a Redis INFO) is taken at each edge; no request is cut off at the end.
 */
import { Pool } from 'undici';
import { checkAnswer } from './sequential.ts';

/** The load and its window. */
export interface ClosedLoopOptions<T> {
  /** Full URL of the endpoint. */
  url: string;
  headers: Record<string, string>;
  /** The same body every time, or a new one per request (e.g. to miss a cache). */
  body: string | (() => string);
  /** The answer is SSE and must end with [DONE] (see checkAnswer). */
  stream: boolean;
  /** Throws unless an answer is good [checkAnswer]. */
  check?: (status: number, text: string) => void;
  connections: number;
  warmS: number;
  durS: number;
  /** Taken at the window's start and end; the window opens and closes as it resolves. */
  probe: () => Promise<T>;
}

/** What one run did. */
export interface ClosedLoopResult<T> {
  /** Answers checked good that ended inside the window. */
  completed: number;
  /** Their latencies in ms, from sending the request to the end of the answer's body. */
  latencyMs: number[];
  /** Seconds between the two probes. */
  windowS: number;
  /** Failed requests over the whole run (warm-up and the requests finishing after the window included). */
  errors: number;
  firstError: string | null;
  before: T;
  after: T;
}

const REQUEST_TIMEOUT_MS = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs warm-up, the measured window and the drain of the requests in flight. */
export async function runClosedLoop<T>(options: ClosedLoopOptions<T>): Promise<ClosedLoopResult<T>> {
  const url = new URL(options.url);
  const pool = new Pool(url.origin, { connections: options.connections, pipelining: 1, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
  let measuring = false;
  let stopping = false;
  let completed = 0;
  const latencyMs: number[] = [];
  let errors = 0;
  let firstError: string | null = null;

  const connection = async () => {
    while (!stopping) {
      try {
        const sentAt = performance.now();
        const response = await pool.request({
          path: url.pathname,
          method: 'POST',
          headers: options.headers,
          body: typeof options.body === 'string' ? options.body : options.body(),
        });
        const text = await response.body.text();
        if (options.check) options.check(response.statusCode, text);
        else checkAnswer(response.statusCode, text, options.stream);
        if (measuring) {
          completed++;
          latencyMs.push(performance.now() - sentAt);
        }
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
        await sleep(10); // a refusing server must not turn the loop into a busy spin
      }
    }
  };

  const connections = Array.from({ length: options.connections }, connection);
  let window: Pick<ClosedLoopResult<T>, 'windowS' | 'before' | 'after'>;
  try {
    await sleep(options.warmS * 1000);
    const before = await options.probe();
    measuring = true;
    const openedAt = performance.now();
    await sleep(options.durS * 1000);
    const after = await options.probe();
    measuring = false;
    window = { windowS: (performance.now() - openedAt) / 1000, before, after };
  } finally {
    stopping = true;
    await Promise.all(connections);
    await pool.close();
  }
  return { completed, latencyMs, errors, firstError, ...window };
}
