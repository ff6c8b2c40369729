import type { Logger } from 'pino';
import type { Env } from '../../config.ts';
import type { ScriptedRedis } from '../../infra/redis/scripts.ts';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import { RateLimiter } from '../rate-limit/rate-limiter.ts';
import { IDEMPOTENCY_TTL_MS, IdempotencyStore } from '../idempotency/idempotency-store.ts';
import type { BudgetLedger } from '../budget/budget-ledger.ts';
import { Admission, type AdmissionOptions, type GiveBackFailure } from './admission.ts';
import type { TenantLimits } from './rate-limits.ts';

/** The configured defaults a request falls back on where its tenant's plan sets none. */
export interface AdmissionDefaults {
  /** 0: no limit. */
  rateLimits: TenantLimits;
  /** Requests of one tenant queued or running at once. */
  maxQueued: number;
  /** Longest a request may take once a worker runs it. */
  requestTimeoutMs: number;
}

/** The defaults of admission where a tenant's plan sets none. */
export function admissionDefaultsOf(env: Env): AdmissionDefaults {
  return {
    rateLimits: {
      tenant: { requestsPerMinute: env.TENANT_RPM, tokensPerMinute: env.TENANT_TPM },
      key: { requestsPerMinute: env.KEY_RPM, tokensPerMinute: env.KEY_TPM },
    },
    maxQueued: env.TENANT_MAX_QUEUED,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
  };
}

/** The admission port of a process (the web tier's requests, the worker's batch lines): what it could not give back is logged against the request. */
export function createAdmission(
  commands: ScriptedRedis,
  keys: RedisKeys,
  ledger: BudgetLedger,
  log: Logger,
  answeredBy: AdmissionOptions['answeredBy'],
): Admission {
  const onGiveBackFailed: GiveBackFailure = (error, part, taken) =>
    log.warn({ err: error, reqId: taken.requestId }, part === 'claim' ? 'releasing the idempotency key failed' : 'releasing the budget reservation failed');
  return new Admission({
    redis: commands,
    keys,
    limiter: new RateLimiter({ redis: commands, keys }),
    idempotency: new IdempotencyStore({ redis: commands, keys, ttlMs: IDEMPOTENCY_TTL_MS }),
    ledger,
    onGiveBackFailed,
    answeredBy,
  });
}
