/** The simulator's injected faults and its abortable waits. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SimulatorOptions } from './descriptor.ts';
import { UpstreamError } from '../shared/upstream-error.ts';

/** A configured fault. */
export type SimulatorFault = NonNullable<SimulatorOptions['fault']>;
/** Which fault a call suffers. */
export type FaultKind = SimulatorFault['kind'];

/** Draws whether this call suffers the configured fault. */
export function rollFault(fault: SimulatorFault | undefined, random: () => number): FaultKind | null {
  if (fault === undefined || fault.rate <= 0) return null;
  return random() < fault.rate ? fault.kind : null;
}

/** The error a 429 or 500 fault throws, shaped as a real upstream response would classify. */
export function statusFaultError(kind: '429' | '500', fault: SimulatorFault): UpstreamError {
  if (kind === '429') {
    const seconds = fault.retry_after_seconds;
    return new UpstreamError('rate_limited', 'Simulated upstream rate limit (HTTP 429)', {
      status: 429,
      retryAfterMs: seconds === undefined ? null : seconds * 1000,
      upstreamMessage: 'Rate limit reached (simulated).',
    });
  }
  return new UpstreamError('server_error', 'Simulated upstream failure (HTTP 500)', {
    status: 500,
    upstreamMessage: 'Internal server error (simulated).',
  });
}

/** The error a broken_stream fault throws after part of the answer. */
export function brokenStreamError(tokensSent: number): UpstreamError {
  return new UpstreamError('broken_stream', `Simulated stream break after ${tokensSent} tokens`);
}

/** Waits `ms` unless the signal aborts first (then throws UpstreamError `aborted`). */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw abortedError(signal);
  if (ms <= 0) return;
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw abortedError(signal);
  }
}

/** Never answers: waits for the timeout (then `timeout`, as undici's headers timeout would) or the abort. */
export async function hang(timeoutMs: number, signal: AbortSignal): Promise<never> {
  await pause(timeoutMs, signal);
  throw new UpstreamError('timeout', `Simulated upstream did not answer within ${timeoutMs} ms`);
}

function abortedError(signal: AbortSignal): UpstreamError {
  return new UpstreamError('aborted', 'The simulated upstream call was aborted', { cause: signal.reason });
}
