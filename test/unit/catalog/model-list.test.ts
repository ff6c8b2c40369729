import { describe, expect, it } from 'vitest';
import { listModels } from '../../../src/domain/catalog/model-list.ts';
import type { CatalogFile, CatalogModel } from '../../../src/domain/catalog/schema.ts';

function model(overrides: Partial<CatalogModel>): CatalogModel {
  return {
    provider: 'simulator',
    upstream_model: 'secret-upstream-name',
    context_window: 1000,
    max_output_tokens: 100,
    input_price_per_mtok: 1,
    output_price_per_mtok: 2,
    ...overrides,
  } as CatalogModel;
}

const catalog: CatalogFile = {
  models: {
    small: model({ context_window: 1000, max_output_tokens: 100, input_price_per_mtok: 1, output_price_per_mtok: 2 }),
    large: model({ context_window: 8000, max_output_tokens: 400, input_price_per_mtok: 3, output_price_per_mtok: 1, cache_read_price_per_mtok: 0.3 }),
    embed: model({ mode: 'embeddings', max_output_tokens: 0, output_price_per_mtok: 0, input_price_per_mtok: 0.02 }),
  },
  tiers: { 'svc-flash': ['small'], 'svc-standard': ['large', 'small'], 'svc-pro': ['large'] },
  pools: {},
};

describe('listModels', () => {
  const models = listModels(catalog, 1_700_000_000);

  it('lists the tiers, then every alias, in OpenAI’s shape', () => {
    expect(models.map((entry) => entry.id)).toEqual(['svc-flash', 'svc-standard', 'svc-pro', 'small', 'large', 'embed']);
    expect(models.every((entry) => entry.object === 'model' && entry.created === 1_700_000_000)).toBe(true);
    expect(models.find((entry) => entry.id === 'small')?.owned_by).toBe('simulator');
  });

  it("gives a tier its models' least limits and dearest prices (what its reservation assumes)", () => {
    expect(models.find((entry) => entry.id === 'svc-standard')?.gateway).toEqual({
      kind: 'tier',
      mode: 'chat',
      candidates: ['large', 'small'],
      context_window: 1000,
      max_output_tokens: 100,
      pricing: { input_per_mtok: 3, output_per_mtok: 2, cache_read_per_mtok: 1, cache_write_per_mtok: 3 },
    });
  });

  it('gives an embeddings model no output fields, and never the upstream name', () => {
    expect(models.find((entry) => entry.id === 'embed')?.gateway).toEqual({
      kind: 'model',
      mode: 'embeddings',
      context_window: 1000,
      pricing: { input_per_mtok: 0.02 },
    });
    expect(JSON.stringify(models)).not.toContain('secret-upstream-name');
  });
});
