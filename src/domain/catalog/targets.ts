import type { CatalogFile } from './schema.ts';
import type { ProviderTarget } from '../../providers/types.ts';

/** The key variable a model names, if its provider takes one. */
function keyVariable(model: CatalogFile['models'][string]): string | undefined {
  return 'api_key_env' in model ? model.api_key_env : undefined;
}

/** Every catalog alias resolved to where and how to call it; built once at startup. */
export function buildTargets(file: CatalogFile, readSecret: (name: string) => string | undefined): Map<string, ProviderTarget> {
  const targets = new Map<string, ProviderTarget>();
  for (const [alias, model] of Object.entries(file.models)) {
    const variable = keyVariable(model);
    targets.set(alias, {
      alias,
      provider: model.provider,
      upstreamModel: model.upstream_model,
      model,
      apiKey: variable ? (readSecret(variable) ?? null) : null,
    });
  }
  return targets;
}

/** Aliases whose provider key variable is named but not set: they will fail at call time. */
export function missingSecrets(file: CatalogFile, readSecret: (name: string) => string | undefined): string[] {
  return Object.entries(file.models).flatMap(([alias, model]) => {
    const variable = keyVariable(model);
    return variable !== undefined && !readSecret(variable) ? [`${alias} (${variable})`] : [];
  });
}
