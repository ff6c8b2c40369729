import type { CatalogModel } from './schema.ts';
import type { Usage } from '../wire/openai-chat.ts';

/**
 * Cost in integer micro-units of the tenant's currency. Prices are currency units per
 * million tokens, so one token costs exactly `price` micro-units.
 */
export function costMicros(model: Pick<CatalogModel, 'input_price_per_mtok' | 'output_price_per_mtok'>, usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'>): number {
  return Math.round(usage.prompt_tokens * model.input_price_per_mtok + usage.completion_tokens * model.output_price_per_mtok);
}
