import { readFile } from 'node:fs/promises';
import { Value } from '@sinclair/typebox/value';
import { parse as parseYaml } from 'yaml';
import { CatalogFileSchema, TIER_ALIASES, type CatalogFile, type CatalogModel } from './schema.ts';

/** Thrown when the catalog file is unreadable or invalid; the message names the file and the field. */
export class CatalogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogError';
  }
}

/** A catalog model with the alias it is listed under. */
export interface CatalogEntry extends CatalogModel {
  alias: string;
}

function parseText(path: string, text: string): unknown {
  try {
    return /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    throw new CatalogError(`Catalog ${path} is not valid ${/\.ya?ml$/i.test(path) ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
}

function validate(path: string, data: unknown): CatalogFile {
  const first = Value.Errors(CatalogFileSchema, data).First();
  if (first) throw new CatalogError(`Catalog ${path}: ${first.path || '/'} ${first.message}.`);
  const file = data as CatalogFile;
  for (const [alias, model] of Object.entries(file.models)) {
    if ((TIER_ALIASES as readonly string[]).includes(alias) || alias === 'auto') {
      throw new CatalogError(`Catalog ${path}: /models/${alias} uses a reserved alias.`);
    }
    if (model.provider === 'openai-compatible' && !model.base_url) {
      throw new CatalogError(`Catalog ${path}: /models/${alias}/base_url is required for provider openai-compatible.`);
    }
  }
  for (const tier of TIER_ALIASES) {
    const missing = file.tiers[tier].find((alias) => !Object.hasOwn(file.models, alias));
    if (missing) throw new CatalogError(`Catalog ${path}: /tiers/${tier} names '${missing}', which is not in /models.`);
  }
  return file;
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
