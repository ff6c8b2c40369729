import type { BreakerSettings, CatalogFile, CatalogModel, Pool } from './schema.ts';
import type { ProviderTarget } from '../../providers/types.ts';

/** A deployment resolved to where and how to call it, with its share of its alias's traffic. */
export type WeightedTarget = ProviderTarget & { weight: number };

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
    const targets = pool.deployments.map(({ id, weight, model }): WeightedTarget => {
      const variable = keyVariable(model);
      return {
        alias,
        deployment: id,
        provider: model.provider,
        upstreamModel: model.upstream_model,
        model,
        apiKey: variable ? (readSecret(variable) ?? null) : null,
        weight,
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
