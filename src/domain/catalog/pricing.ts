import type { CatalogModel } from './schema.ts';
import type { Usage } from '../../wire/openai-chat.ts';

type Prices = Pick<CatalogModel, 'input_price_per_mtok' | 'output_price_per_mtok' | 'cache_read_price_per_mtok' | 'cache_write_price_per_mtok' | 'batch_price'>;

/**
 * Cost in integer micro-units of the tenant's currency. Prices are currency units per million
 * tokens, so one token costs exactly `price` micro-units. Prompt tokens read from or written to
 * the provider's cache (counted in `prompt_tokens`) cost the catalog's cache prices when it gives
 * them, the input price otherwise.
 */
export function costMicros(
  model: Prices,
  usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details'>,
  lane: 'live' | 'batch' = 'live',
): number {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage.prompt_tokens_details?.cache_write_tokens ?? 0;
  const uncached = Math.max(0, usage.prompt_tokens - cached - written);
  const prompt =
    uncached * model.input_price_per_mtok +
    cached * (model.cache_read_price_per_mtok ?? model.input_price_per_mtok) +
    written * (model.cache_write_price_per_mtok ?? model.input_price_per_mtok);
  // A batch line is sold at the catalog's fraction of the live price, as providers sell their batch APIs.
  const share = lane === 'batch' ? (model.batch_price ?? 1) : 1;
  return Math.round((prompt + usage.completion_tokens * model.output_price_per_mtok) * share);
}
