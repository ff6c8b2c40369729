import type { CatalogFile } from './schema.ts';
import type { ProviderTarget } from '../providers/types.ts';

/** Every catalog alias resolved to where and how to call it; built once at startup. */
export function buildTargets(file: CatalogFile, readSecret: (name: string) => string | undefined): Map<string, ProviderTarget> {
  const targets = new Map<string, ProviderTarget>();
  for (const [alias, model] of Object.entries(file.models)) {
    targets.set(alias, {
      alias,
      provider: model.provider,
      upstreamModel: model.upstream_model,
      baseUrl: model.base_url?.replace(/\/+$/, '') ?? null,
      apiKey: model.api_key_env ? (readSecret(model.api_key_env) ?? null) : null,
      simulator: model.simulator ?? null,
    });
  }
  return targets;
}

/** Aliases whose provider key variable is named but not set: they will fail at call time. */
export function missingSecrets(file: CatalogFile, readSecret: (name: string) => string | undefined): string[] {
  return Object.entries(file.models)
    .filter(([, model]) => model.api_key_env !== undefined && !readSecret(model.api_key_env))
    .map(([alias, model]) => `${alias} (${model.api_key_env})`);
}
