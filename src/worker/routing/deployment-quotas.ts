import type { Logger } from 'pino';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import type { ScriptedRedis } from '../../infra/redis/scripts.ts';
import { spendQuota, takeQuota } from '../../infra/redis/deployment-quota.ts';
import type { TargetPool, WeightedTarget } from '../../domain/catalog/targets.ts';

/**
 * The per-minute quotas of the deployments that set one (`rpm`, `tpm`), shared by every worker
 * (deployment-quota-1.lua). A call takes one request from its deployment before it goes (one
 * script call, only for a deployment with a quota); its tokens, known once it ended, are added in
 * one call per deployment every `flushMs`.
 */
export class DeploymentQuotas {
  readonly #redis: ScriptedRedis;
  readonly #keys: RedisKeys;
  readonly #log: Logger;
  readonly #limited = new Map<string, WeightedTarget>();
  readonly #tokens = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;

  constructor(options: { redis: ScriptedRedis; keys: RedisKeys; pools: ReadonlyMap<string, TargetPool>; log: Logger }) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#log = options.log;
    for (const pool of options.pools.values()) {
      for (const target of pool.targets) if (target.rpm !== null || target.tpm !== null) this.#limited.set(target.deployment, target);
    }
  }

  /** Adds the spent tokens every `flushMs`; returns how to stop (after a last flush). */
  start(flushMs: number): () => Promise<void> {
    this.#timer = setInterval(() => void this.flush(), flushMs);
    this.#timer.unref();
    return async () => {
      if (this.#timer) clearInterval(this.#timer);
      await this.flush();
    };
  }

  /** Takes one call from the deployment's quota: 0 when it may go now, else how long until it may. */
  async take(target: WeightedTarget): Promise<number> {
    if (target.rpm === null && target.tpm === null) return 0;
    try {
      return await takeQuota(this.#redis, this.#keys.deploymentQuota(target.deployment), this.#limits(target), Date.now());
    } catch (error) {
      // A quota that cannot be read lets calls through: the provider's own 429 still stops them.
      this.#log.warn({ err: error, deployment: target.deployment }, 'reading a deployment quota failed');
      return 0;
    }
  }

  /** Counts the tokens a finished call of the deployment used, if it has a tokens quota. */
  spent(deployment: string, tokens: number): void {
    if (tokens <= 0 || this.#limited.get(deployment)?.tpm == null) return;
    this.#tokens.set(deployment, (this.#tokens.get(deployment) ?? 0) + tokens);
  }

  async flush(): Promise<void> {
    const batch = [...this.#tokens];
    this.#tokens.clear();
    await Promise.all(
      batch.map(async ([deployment, tokens]) => {
        const target = this.#limited.get(deployment) as WeightedTarget;
        try {
          await spendQuota(this.#redis, this.#keys.deploymentQuota(deployment), this.#limits(target), tokens, Date.now());
        } catch (error) {
          this.#log.warn({ err: error, deployment }, 'counting tokens in a deployment quota failed');
        }
      }),
    );
  }

  #limits(target: WeightedTarget): { rpm: number; tpm: number } {
    return { rpm: target.rpm ?? 0, tpm: target.tpm ?? 0 };
  }
}
