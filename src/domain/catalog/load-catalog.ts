import { readFile } from 'node:fs/promises';
import { Type, type Static, type TObject } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import {
  ALIAS_PATTERN,
  DEPLOYMENT_SCHEMAS,
  MODEL_SCHEMAS,
  POOL_FIELDS,
  TIER_ALIASES,
  TiersSchema,
  type BreakerSettings,
  type CatalogFile,
  type CatalogModel,
  type CatalogModelSchema,
  type Pool,
} from './schema.ts';
import { PROVIDER_DESCRIPTORS, descriptorOf, type ProviderName } from '../../providers/descriptors.ts';

/** Thrown when the catalog file is unreadable or invalid; the message names the file and the field. */
export class CatalogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogError';
  }
}

/** A catalog model with the alias it is listed under. */
export type CatalogEntry = CatalogModel & { alias: string };

// The file's outline first; each model is then checked against its own provider's schema, so an
// error names the field rather than saying the model matches none of the providers.
const CatalogOutlineSchema = Type.Object(
  { models: Type.Record(Type.String({ pattern: ALIAS_PATTERN }), Type.Object({})), tiers: TiersSchema },
  { additionalProperties: false },
);

// A pooled alias's fields; each deployment is then checked against its provider's schema.
const PoolOutlineSchema = Type.Object(
  { ...POOL_FIELDS, deployments: Type.Array(Type.Object({ provider: Type.String() }), { minItems: 1 }) },
  { additionalProperties: false },
);

/** The breaker's settings where the catalog is silent (docs/decisions/routing-pools-breakers.md). */
export const BREAKER_DEFAULTS = { failure_rate: 0.5, min_calls: 10, window_s: 30, cooldown_s: 30 } as const;
/** However often its probes fail, a deployment is tried again at least this often. */
export const MAX_COOLDOWN_MS = 10 * 60_000;

type WrittenDeployment = { provider: string; id: string; weight?: number; rpm?: number; tpm?: number } & Record<string, unknown>;
type WrittenPool = Omit<Static<typeof PoolOutlineSchema>, 'deployments'> & { deployments: WrittenDeployment[] };

function parseText(path: string, text: string): unknown {
  try {
    return /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    throw new CatalogError(`Catalog ${path} is not valid ${/\.ya?ml$/i.test(path) ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
}

/** Checks one provider's fields (a model, or a deployment at `where`) against that provider's schema. */
function validateProviderFields(path: string, where: string, model: { provider?: unknown }, schemas: ReadonlyMap<string, TObject>): void {
  const schema = typeof model.provider === 'string' ? schemas.get(model.provider) : undefined;
  if (!schema) {
    const names = PROVIDER_DESCRIPTORS.map((descriptor) => descriptor.name).join(', ');
    throw new CatalogError(`Catalog ${path}: ${where}/provider '${String(model.provider)}' is not one of ${names}.`);
  }
  const first = Value.Errors(schema, model).First();
  if (!first) return;
  const field = first.path.slice(1);
  if (first.message === 'Expected required property' && Object.hasOwn(descriptorOf(model.provider as ProviderName).options, field)) {
    throw new CatalogError(`Catalog ${path}: ${where}/${field} is required for provider ${String(model.provider)}.`);
  }
  throw new CatalogError(`Catalog ${path}: ${where}${first.path} ${first.message}.`);
}

/** A pooled alias: its own fields, then each deployment; one provider per alias, so that what the web checks of a request holds for every deployment. */
function validatePool(path: string, alias: string, pool: object): WrittenPool {
  const first = Value.Errors(PoolOutlineSchema, pool).First();
  if (first) throw new CatalogError(`Catalog ${path}: /models/${alias}${first.path} ${first.message}.`);
  const written = pool as WrittenPool;
  written.deployments.forEach((deployment, i) => validateProviderFields(path, `/models/${alias}/deployments/${i}`, deployment, DEPLOYMENT_SCHEMAS));
  const provider = written.deployments[0]?.provider;
  const other = written.deployments.findIndex((deployment) => deployment.provider !== provider);
  if (other !== -1)
    throw new CatalogError(
      `Catalog ${path}: /models/${alias}/deployments/${other}/provider differs from the first deployment's; an alias's deployments share one provider.`,
    );
  return written;
}

function breakerOf(model: CatalogModel): BreakerSettings {
  const written = { ...BREAKER_DEFAULTS, ...model.breaker };
  return {
    failureRate: written.failure_rate,
    minCalls: written.min_calls,
    windowMs: written.window_s * 1000,
    cooldownMs: Math.round(written.cooldown_s * 1000),
    maxCooldownMs: Math.max(MAX_COOLDOWN_MS, Math.round(written.cooldown_s * 1000)),
  };
}

/** A pooled alias as a model (its first deployment's provider fields) and as a pool. */
function normalizePool(path: string, alias: string, written: WrittenPool): { model: CatalogModel; pool: Pool } {
  const { deployments, routing, ...fields } = written;
  const models = deployments.map(({ id: _id, weight: _weight, rpm: _rpm, tpm: _tpm, ...target }) =>
    normalizeModel(path, alias, { ...fields, ...target } as Static<typeof CatalogModelSchema>),
  );
  const model = models[0] as CatalogModel;
  const pool: Pool = {
    alias,
    routing: routing ?? 'weighted',
    breaker: breakerOf(model),
    deployments: deployments.map((deployment, i) => ({
      id: deployment.id,
      weight: deployment.weight ?? 1,
      rpm: deployment.rpm ?? null,
      tpm: deployment.tpm ?? null,
      model: models[i] as CatalogModel,
    })),
  };
  return { model, pool };
}

/**
 * What the schema cannot say: a chat model names its output limit and price, an embeddings model's
 * provider can embed. An embeddings model produces no tokens: its output fields become 0.
 */
function normalizeModel(path: string, alias: string, model: Static<typeof CatalogModelSchema>): CatalogModel {
  if (model.mode === 'embeddings') {
    if (!descriptorOf(model.provider).capabilities.embed)
      throw new CatalogError(`Catalog ${path}: /models/${alias}/mode: provider ${model.provider} has no embeddings.`);
    return { ...model, max_output_tokens: model.max_output_tokens ?? 0, output_price_per_mtok: model.output_price_per_mtok ?? 0 };
  }
  for (const field of ['max_output_tokens', 'output_price_per_mtok'] as const) {
    if (model[field] === undefined) throw new CatalogError(`Catalog ${path}: /models/${alias}/${field} is required for a chat model.`);
  }
  return model as CatalogModel;
}

function validate(path: string, data: unknown): CatalogFile {
  const first = Value.Errors(CatalogOutlineSchema, data).First();
  if (first) throw new CatalogError(`Catalog ${path}: ${first.path || '/'} ${first.message}.`);
  const outline = data as { models: Record<string, object>; tiers: CatalogFile['tiers'] };
  const models: Record<string, CatalogModel> = {};
  const pools: Record<string, Pool> = {};
  const deploymentIds = new Map<string, string>();
  for (const [alias, written] of Object.entries(outline.models)) {
    if ((TIER_ALIASES as readonly string[]).includes(alias) || alias === 'auto') {
      throw new CatalogError(`Catalog ${path}: /models/${alias} uses a reserved alias.`);
    }
    if ('deployments' in written) {
      const { model, pool } = normalizePool(path, alias, validatePool(path, alias, written));
      models[alias] = model;
      pools[alias] = pool;
    } else {
      validateProviderFields(path, `/models/${alias}`, written, MODEL_SCHEMAS);
      const model = normalizeModel(path, alias, written as Static<typeof CatalogModelSchema>);
      models[alias] = model;
      pools[alias] = { alias, routing: 'weighted', breaker: breakerOf(model), deployments: [{ id: alias, weight: 1, rpm: null, tpm: null, model }] };
    }
    for (const { id } of pools[alias]?.deployments ?? []) {
      const holder = deploymentIds.get(id);
      if (holder !== undefined)
        throw new CatalogError(
          `Catalog ${path}: deployment id '${id}' of /models/${alias} is also ${holder === id ? 'an alias written as one target' : `a deployment of /models/${holder}`}; ids are unique across the catalog.`,
        );
      deploymentIds.set(id, alias);
    }
  }
  for (const [alias, model] of Object.entries(models)) {
    const fallback = model.context_window_fallback;
    if (fallback === undefined) continue;
    const larger = Object.hasOwn(models, fallback) ? models[fallback] : undefined;
    if (!larger) throw new CatalogError(`Catalog ${path}: /models/${alias}/context_window_fallback names '${fallback}', which is not in /models.`);
    if (model.mode === 'embeddings' || larger.mode === 'embeddings')
      throw new CatalogError(`Catalog ${path}: /models/${alias}/context_window_fallback: a fallback joins two chat models.`);
    if (larger.context_window <= model.context_window)
      throw new CatalogError(
        `Catalog ${path}: /models/${alias}/context_window_fallback '${fallback}' has no larger context window (${larger.context_window}).`,
      );
  }
  for (const tier of TIER_ALIASES) {
    const missing = outline.tiers[tier].find((alias) => !Object.hasOwn(outline.models, alias));
    if (missing) throw new CatalogError(`Catalog ${path}: /tiers/${tier} names '${missing}', which is not in /models.`);
    const embeddings = outline.tiers[tier].find((alias) => models[alias]?.mode === 'embeddings');
    if (embeddings) throw new CatalogError(`Catalog ${path}: /tiers/${tier} names '${embeddings}', an embeddings model; tiers are chat models.`);
  }
  return { models, tiers: outline.tiers, pools };
}

/** Reads and validates a catalog file (JSON, or YAML by its .yaml/.yml extension). */
export async function loadCatalogFile(path: string): Promise<CatalogFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CatalogError(`Catalog ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return validate(path, parseText(path, text));
}

/** The ordered candidates an alias stands for: one model, or a tier's list. */
export function candidatesOf(file: CatalogFile, alias: string): CatalogEntry[] | null {
  // hasOwn: an alias such as 'toString' or '__proto__' must not find Object.prototype.
  const tier = Object.hasOwn(file.tiers, alias) ? (file.tiers as Record<string, string[]>)[alias] : undefined;
  const aliases = tier ?? (Object.hasOwn(file.models, alias) ? [alias] : null);
  if (!aliases) return null;
  return aliases.map((name) => ({ ...(file.models[name] as CatalogModel), alias: name }));
}
