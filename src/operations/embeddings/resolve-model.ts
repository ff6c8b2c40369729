import { candidatesOf, type CatalogEntry } from '../../domain/catalog/load-catalog.ts';
import type { CatalogFile } from '../../domain/catalog/schema.ts';
import { countTextTokens } from '../../providers/shared/tokens.ts';
import { InputTooLongError, ModelNotFoundError, UnsupportedParameterError, WrongModelModeError } from '../../errors/gateway-error.ts';
import { descriptorOf } from '../../providers/descriptors.ts';
import type { ProviderDescriptor } from '../../providers/descriptor.ts';
import { inputItems } from '../../providers/shared/embeddings.ts';
import type { EmbeddingsBody } from '../../wire/openai-embeddings.ts';

function paramOf(input: EmbeddingsBody['input'], index: number): string {
  return typeof input === 'string' || typeof input[0] === 'number' ? 'input' : `input[${index}]`;
}

/**
 * The alias's one model, which must be an embeddings model (tiers are chat models) that can take
 * the request: not a parameter the catalog rejects, not what its provider cannot express, and no
 * input longer than its window (each input is embedded on its own).
 */
export function resolveEmbeddingsModel(catalog: CatalogFile, body: EmbeddingsBody): CatalogEntry {
  const candidates = candidatesOf(catalog, body.model);
  if (!candidates) throw new ModelNotFoundError(body.model);
  const model = candidates[0] as CatalogEntry;
  if (candidates.length > 1 || model.mode !== 'embeddings') throw new WrongModelModeError(body.model, 'chat', '/v1/embeddings');
  const rejected = model.rejected_params?.find((param) => (body as Record<string, unknown>)[param] !== undefined);
  if (rejected) throw new UnsupportedParameterError(rejected, model.alias);
  const descriptor: ProviderDescriptor = descriptorOf(model.provider);
  const use = descriptor.unsupportedEmbedding?.(body);
  if (use) throw new UnsupportedParameterError(use.param, model.alias, use.detail);
  inputItems(body.input).forEach((item, i) => {
    // A token covers at least one byte: the byte length bounds the count, and the tokenizer runs only past the window.
    if (typeof item !== 'string' || Buffer.byteLength(item) <= model.context_window) return;
    const tokens = countTextTokens(item);
    if (tokens > model.context_window) throw new InputTooLongError(model.alias, paramOf(body.input, i), tokens, model.context_window);
  });
  return model;
}
