import { describe, expect, it } from 'vitest';
import { costMicros } from '../../../src/domain/catalog/pricing.ts';

const plain = { input_price_per_mtok: 3, output_price_per_mtok: 15 };
const withCachePrices = { ...plain, cache_read_price_per_mtok: 0.3, cache_write_price_per_mtok: 3.75 };

describe('costMicros', () => {
  it('charges prompt tokens at the input price and completion tokens at the output price', () => {
    expect(costMicros(plain, { prompt_tokens: 1000, completion_tokens: 100 })).toBe(1000 * 3 + 100 * 15);
  });

  it("charges cached and cache-written prompt tokens at the catalog's cache prices", () => {
    // 1,000 prompt tokens of which 600 were read from the cache and 300 written to it: 100 plain.
    const usage = { prompt_tokens: 1000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 300 } };
    expect(costMicros(withCachePrices, usage)).toBe(Math.round(100 * 3 + 600 * 0.3 + 300 * 3.75 + 10 * 15));
  });

  it('charges cache tokens at the input price when the catalog gives no cache prices', () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 300 } };
    expect(costMicros(plain, usage)).toBe(3000);
  });

  it('never charges a negative uncached part when a provider reports more cached tokens than prompt tokens', () => {
    const usage = { prompt_tokens: 10, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 20 } };
    expect(costMicros(withCachePrices, usage)).toBe(Math.round(20 * 0.3));
  });

  it('rounds to whole micro-units', () => {
    expect(costMicros({ input_price_per_mtok: 0.15, output_price_per_mtok: 0.6 }, { prompt_tokens: 3, completion_tokens: 1 })).toBe(1);
  });
});
