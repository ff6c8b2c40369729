import { readFile } from 'node:fs/promises';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import { ALIAS_PATTERN, MODEL_SCHEMAS, TIER_ALIASES, TiersSchema, type CatalogFile, type CatalogModel, type CatalogModelSchema } from './schema.ts';
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
  { models: Type.Record(Type.String({ pattern: ALIAS_PATTERN }), Type.Object({ provider: Type.String() })), tiers: TiersSchema },
  { additionalProperties: false },
);

function parseText(path: string, text: string): unknown {
  try {
    return /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    throw new CatalogError(`Catalog ${path} is not valid ${/\.ya?ml$/i.test(path) ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
}

function validateModel(path: string, alias: string, model: { provider: string }): void {
  const schema = MODEL_SCHEMAS.get(model.provider);
  if (!schema) {
    const names = PROVIDER_DESCRIPTORS.map((descriptor) => descriptor.name).join(', ');
    throw new CatalogError(`Catalog ${path}: /models/${alias}/provider '${model.provider}' is not one of ${names}.`);
  }
  const first = Value.Errors(schema, model).First();
  if (!first) return;
  const field = first.path.slice(1);
  if (first.message === 'Expected required property' && Object.hasOwn(descriptorOf(model.provider as ProviderName).options, field)) {
    throw new CatalogError(`Catalog ${path}: /models/${alias}/${field} is required for provider ${model.provider}.`);
  }
  throw new CatalogError(`Catalog ${path}: /models/${alias}${first.path} ${first.message}.`);
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
  const outline = data as { models: Record<string, { provider: string }>; tiers: CatalogFile['tiers'] };
  for (const [alias, model] of Object.entries(outline.models)) {
    if ((TIER_ALIASES as readonly string[]).includes(alias) || alias === 'auto') {
      throw new CatalogError(`Catalog ${path}: /models/${alias} uses a reserved alias.`);
    }
    validateModel(path, alias, model);
  }
  const models: Record<string, CatalogModel> = {};
  for (const [alias, model] of Object.entries(outline.models)) models[alias] = normalizeModel(path, alias, model as Static<typeof CatalogModelSchema>);
  for (const tier of TIER_ALIASES) {
    const missing = outline.tiers[tier].find((alias) => !Object.hasOwn(outline.models, alias));
    if (missing) throw new CatalogError(`Catalog ${path}: /tiers/${tier} names '${missing}', which is not in /models.`);
    const embeddings = outline.tiers[tier].find((alias) => models[alias]?.mode === 'embeddings');
    if (embeddings) throw new CatalogError(`Catalog ${path}: /tiers/${tier} names '${embeddings}', an embeddings model; tiers are chat models.`);
  }
  return { models, tiers: outline.tiers };
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
