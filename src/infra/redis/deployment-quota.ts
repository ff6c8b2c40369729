import type { ScriptedRedis } from './scripts.ts';

/** The window of a deployment's quota: its limits are per minute, as providers state theirs. */
export const QUOTA_WINDOW_MS = 60_000;

/** A deployment's limits per minute; 0: none. */
export interface QuotaLimits {
  rpm: number;
  tpm: number;
}

/** Takes one call from a deployment's quota: 0 when let through (and charged), else the ms to wait. */
export async function takeQuota(redis: ScriptedRedis, key: string, limits: QuotaLimits, now: number): Promise<number> {
  const [, waitMs] = (await redis.deploymentQuota(key, now, 'take', QUOTA_WINDOW_MS, limits.rpm, limits.tpm)) as [number, number];
  return Number(waitMs);
}

/** Adds the tokens the deployment's finished calls used. */
export async function spendQuota(redis: ScriptedRedis, key: string, limits: QuotaLimits, tokens: number, now: number): Promise<void> {
  await redis.deploymentQuota(key, now, 'spend', QUOTA_WINDOW_MS, limits.rpm, limits.tpm, tokens);
}
