import type { BreakerSettings } from '../../domain/catalog/schema.ts';
import type { ScriptedRedis } from './scripts.ts';

/** A breaker's state, as circuit-breaker-1.lua keeps it (and as `gateway_circuit_state` reports it). */
export const BREAKER_STATES = ['closed', 'open', 'half_open'] as const;
export type BreakerState = (typeof BREAKER_STATES)[number];

/** What circuit-breaker-1.lua answers: the state after the call, and what the call changed. */
export interface BreakerReply {
  state: BreakerState;
  openUntilMs: number;
  pausedUntilMs: number;
  /** The state this call moved it to, if it moved. */
  transition: BreakerState | null;
  /** A probe call: this caller is the one probe of a half-open breaker. */
  probeGranted: boolean;
}

/** What a report carries: calls that ended since the last one, a probe's outcome, a pause. */
export interface BreakerReport {
  calls: number;
  failures: number;
  probe: 'ok' | 'fail' | null;
  pauseUntilMs: number;
}

function settingsArgs(settings: BreakerSettings): number[] {
  return [settings.failureRate, settings.minCalls, settings.windowMs, settings.cooldownMs, settings.maxCooldownMs];
}

function parse(reply: unknown): BreakerReply {
  const [state, openUntil, paused, transition, granted] = reply as [number, number, number, string, number];
  return {
    state: BREAKER_STATES[state] ?? 'closed',
    openUntilMs: Number(openUntil),
    pausedUntilMs: Number(paused),
    transition: (BREAKER_STATES as readonly string[]).includes(transition) ? (transition as BreakerState) : null,
    probeGranted: granted === 1,
  };
}

/** The breaker's state now. */
export async function readBreaker(redis: ScriptedRedis, key: string, now: number): Promise<BreakerReply> {
  return parse(await redis.circuitBreaker(key, now, 'read'));
}

/** Counts calls (and a probe's outcome, and a pause) and moves the breaker as they say. */
export async function reportBreaker(redis: ScriptedRedis, key: string, settings: BreakerSettings, report: BreakerReport, now: number): Promise<BreakerReply> {
  return parse(
    await redis.circuitBreaker(key, now, 'report', ...settingsArgs(settings), report.calls, report.failures, report.probe ?? '', report.pauseUntilMs),
  );
}

/** Asks to be the one probe of an open breaker whose cooldown ended (or of a half-open one whose probe was lost). */
export async function probeBreaker(redis: ScriptedRedis, key: string, settings: BreakerSettings, probeLeaseMs: number, now: number): Promise<BreakerReply> {
  return parse(await redis.circuitBreaker(key, now, 'probe', ...settingsArgs(settings), 0, 0, '', 0, probeLeaseMs));
}

/** The state of each breaker now, in order: one read each, sent together (one round trip on an auto-pipelined connection). */
export function readBreakers(redis: ScriptedRedis, keys: readonly string[], now: number): Promise<BreakerReply[]> {
  return Promise.all(keys.map((key) => readBreaker(redis, key, now)));
}
