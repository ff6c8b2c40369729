/**
 * Open-loop load: requests sent at a fixed rate whatever the answers do (a closed loop would send
 * less as the gateway slows, and hide it). Each request is timed from the moment it was due, so a
 * bench process late to send it counts against the gateway rather than vanishing
 * (coordinated omission). The gateway's `x-request-id` of each answer is kept, to find its usage record.
 */
import { Pool } from 'undici';
import type pg from 'pg';

/** One request of the load. */
export interface OpenLoopSample {
  /** From the moment it was due to the end of the answer's body. */
  latencyMs: number;
  status: number;
  requestId: string | null;
  /** Why it is not a good answer; null when it is. */
  error: string | null;
}

/** The load and its answers. */
export interface OpenLoopResult {
  samples: OpenLoopSample[];
  /** Seconds from the first request due to the last answer. */
  elapsedS: number;
  /** How late the bench was, at worst, to send a request (its own CPU share). */
  maxSendLagMs: number;
}

/** What to send, how often, for how long. */
export interface OpenLoopOptions {
  /** Full URL of the endpoint. */
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Requests a second. */
  rate: number;
  seconds: number;
  /** Keep-alive connections: more than the requests ever in flight, so that none waits for one. */
  connections: number;
  /** Throws unless an answer is good. */
  check: (status: number, text: string) => void;
}

const REQUEST_TIMEOUT_MS = 60_000;

async function sendOne(pool: Pool, path: string, options: OpenLoopOptions, dueAt: number): Promise<OpenLoopSample> {
  try {
    const response = await pool.request({ method: 'POST', path, headers: options.headers, body: options.body });
    const text = await response.body.text();
    const latencyMs = performance.now() - dueAt;
    const id = response.headers['x-request-id'];
    const requestId = typeof id === 'string' ? id : null;
    try {
      options.check(response.statusCode, text);
      return { latencyMs, status: response.statusCode, requestId, error: null };
    } catch (error) {
      return { latencyMs, status: response.statusCode, requestId, error: error instanceof Error ? error.message : String(error) };
    }
  } catch (error) {
    return { latencyMs: performance.now() - dueAt, status: 0, requestId: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Sends `rate × seconds` requests, the n-th due n/rate seconds after the first, and waits for every answer. */
export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const url = new URL(options.url);
  const pool = new Pool(url.origin, { connections: options.connections, pipelining: 1, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
  const total = Math.round(options.rate * options.seconds);
  const start = performance.now();
  const dueAt = (n: number) => start + (n * 1000) / options.rate;
  const answers: Array<Promise<OpenLoopSample>> = [];
  let maxSendLagMs = 0;
  try {
    while (answers.length < total) {
      const now = performance.now();
      for (let n = answers.length; n < total && dueAt(n) <= now; n = answers.length) {
        maxSendLagMs = Math.max(maxSendLagMs, now - dueAt(n));
        answers.push(sendOne(pool, url.pathname, options, dueAt(n)));
      }
      if (answers.length < total) await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueAt(answers.length) - performance.now())));
    }
    const samples = await Promise.all(answers);
    return { samples, elapsedS: (performance.now() - start) / 1000, maxSendLagMs };
  } finally {
    await pool.close();
  }
}

/** What the worker recorded of live requests: their queue wait and latency (ms, from enqueue), and those not found. */
export interface RecordedTimes {
  queueWaitMs: number[];
  latencyMs: number[];
  missing: number;
}

/**
 * The usage records of live requests (`batch_id` null) by request id, waiting up to `timeoutMs`
 * for the outbox to write the last of them.
 */
export async function recordedTimes(db: pg.Pool, requestIds: readonly string[], timeoutMs: number): Promise<RecordedTimes> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ queue_wait_ms: number; latency_ms: number }>(
      'SELECT queue_wait_ms, latency_ms FROM usage_records WHERE request_id = ANY($1) AND batch_id IS NULL',
      [requestIds],
    );
    if (rows.length >= requestIds.length || Date.now() > deadline) {
      return { queueWaitMs: rows.map((r) => r.queue_wait_ms), latencyMs: rows.map((r) => r.latency_ms), missing: requestIds.length - rows.length };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
