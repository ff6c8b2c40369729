import type { BreakerSettings, CatalogFile, CatalogModel, Deployment, Pool } from './schema.ts';
import type { ProviderTarget } from '../../providers/types.ts';

/** A deployment resolved to where and how to call it, with its share of its alias's traffic and its quota per minute. */
export type WeightedTarget = ProviderTarget & Pick<Deployment, 'weight' | 'rpm' | 'tpm'>;

/** An alias's deployments resolved, with how to pick among them and their breakers' settings. */
export interface TargetPool {
  alias: string;
  routing: Pool['routing'];
  breaker: BreakerSettings;
  targets: readonly WeightedTarget[];
}

/** The key variable a model names, if its provider takes one. */
function keyVariable(model: CatalogModel): string | undefined {
  return 'api_key_env' in model ? model.api_key_env : undefined;
}

/** Every catalog alias resolved to its deployments; built once at startup. */
export function buildPools(file: CatalogFile, readSecret: (name: string) => string | undefined): Map<string, TargetPool> {
  const pools = new Map<string, TargetPool>();
  for (const [alias, pool] of Object.entries(file.pools)) {
    const targets = pool.deployments.map(({ id, weight, rpm, tpm, model }): WeightedTarget => {
      const variable = keyVariable(model);
      return {
        alias,
        deployment: id,
        provider: model.provider,
        upstreamModel: model.upstream_model,
        model,
        apiKey: variable ? (readSecret(variable) ?? null) : null,
        weight,
        rpm,
        tpm,
      };
    });
    pools.set(alias, { alias, routing: pool.routing, breaker: pool.breaker, targets });
  }
  return pools;
}

/** Deployments whose provider key variable is named but not set: they will fail at call time. */
export function missingSecrets(file: CatalogFile, readSecret: (name: string) => string | undefined): string[] {
  return Object.values(file.pools).flatMap((pool) =>
    pool.deployments.flatMap(({ id, model }) => {
      const variable = keyVariable(model);
      const name = id === pool.alias ? pool.alias : `${pool.alias}/${id}`;
      return variable !== undefined && !readSecret(variable) ? [`${name} (${variable})`] : [];
    }),
  );
}

/**
 * The connect limits the catalog sets, by origin: a pool of connections serves one origin, so
 * models sharing an origin share its shortest limit.
 */
export function connectTimeoutsOf(
  pools: ReadonlyMap<string, TargetPool>,
  defaultBaseUrl: (provider: WeightedTarget['provider']) => string | null,
): Map<string, number> {
  const limits = new Map<string, number>();
  for (const pool of pools.values()) {
    for (const target of pool.targets) {
      const limit = target.model.timeouts?.connect_ms;
      const baseUrl = ('base_url' in target.model ? target.model.base_url : undefined) ?? defaultBaseUrl(target.provider);
      if (limit === undefined || !baseUrl) continue;
      const origin = new URL(baseUrl).origin;
      limits.set(origin, Math.min(limit, limits.get(origin) ?? Infinity));
    }
  }
  return limits;
}
