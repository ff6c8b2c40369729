import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogError, candidatesOf, loadCatalogFile } from '../../../src/domain/catalog/load-catalog.ts';
import type { CatalogFile, CatalogModel, WrittenCatalog } from '../../../src/domain/catalog/schema.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-catalog-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function model(overrides: Record<string, unknown> = {}): CatalogModel {
  return {
    provider: 'simulator',
    upstream_model: 'sim-1',
    context_window: 4096,
    max_output_tokens: 512,
    input_price_per_mtok: 1,
    output_price_per_mtok: 2,
    ...overrides,
  };
}

function catalog(): WrittenCatalog {
  return {
    models: {
      small: model(),
      big: model({ upstream_model: 'sim-big', context_window: 128_000 }),
      remote: model({ provider: 'openai-compatible', upstream_model: 'gpt-x', base_url: 'https://api.example.com/v1', api_key_env: 'EXAMPLE_KEY' }),
    },
    tiers: { 'svc-flash': ['small'], 'svc-standard': ['big', 'small'], 'svc-pro': ['remote', 'big'] },
  };
}

/** The catalog as the loader gives it; candidatesOf reads only models and tiers. */
function loaded(): CatalogFile {
  return { ...(catalog() as Omit<CatalogFile, 'pools'>), pools: {} };
}

let fileNumber = 0;
async function write(text: string, extension = 'json'): Promise<string> {
  const path = join(dir, `catalog-${++fileNumber}.${extension}`);
  await writeFile(path, text);
  return path;
}

async function loadError(data: unknown): Promise<{ path: string; message: string }> {
  const path = await write(JSON.stringify(data));
  const error = await loadCatalogFile(path).then(
    () => new Error('expected a CatalogError'),
    (thrown: unknown) => thrown as Error,
  );
  expect(error).toBeInstanceOf(CatalogError);
  return { path, message: error.message };
}

describe('loadCatalogFile: formats', () => {
  it('reads JSON', async () => {
    const path = await write(JSON.stringify(catalog()));
    const { models, tiers } = await loadCatalogFile(path);
    expect({ models, tiers }).toEqual(catalog());
  });

  it.each(['yaml', 'yml', 'YAML'])('reads YAML by its .%s extension', async (extension) => {
    const yaml = [
      'models:',
      '  small: { provider: simulator, upstream_model: sim-1, context_window: 4096, max_output_tokens: 512, input_price_per_mtok: 1, output_price_per_mtok: 2 }',
      'tiers:',
      '  svc-flash: [small]',
      '  svc-standard: [small]',
      '  svc-pro: [small]',
    ].join('\n');
    const file = await loadCatalogFile(await write(yaml, extension));
    expect(file.models['small']).toEqual(model());
    expect(file.tiers['svc-pro']).toEqual(['small']);
  });

  it('names the file and the format when the text does not parse', async () => {
    const json = await write('{"models": ');
    await expect(loadCatalogFile(json)).rejects.toThrow(new RegExp(`^Catalog ${json} is not valid JSON: `));
    const yaml = await write('models: [unclosed', 'yaml');
    await expect(loadCatalogFile(yaml)).rejects.toThrow(new RegExp(`^Catalog ${yaml} is not valid YAML: `));
  });

  it('names the file and the reason when it cannot be read', async () => {
    const missing = join(dir, 'nope.json');
    await expect(loadCatalogFile(missing)).rejects.toThrow(`Catalog ${missing} cannot be read: ENOENT`);
  });
});

describe('loadCatalogFile: validation names the path', () => {
  it('a field out of range', async () => {
    const data = catalog();
    (data.models['small'] as CatalogModel).context_window = 0;
    const { path, message } = await loadError(data);
    expect(message).toBe(`Catalog ${path}: /models/small/context_window Expected integer to be greater or equal to 1.`);
  });

  it('a missing required field', async () => {
    const data = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
    delete data.models['big']?.['upstream_model'];
    const { message } = await loadError(data);
    expect(message).toMatch(/: \/models\/big\/upstream_model Expected required property\.$/);
  });

  it('an unknown field of a model', async () => {
    const data = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
    (data.models['small'] as Record<string, unknown>)['temperature_default'] = 1;
    const { message } = await loadError(data);
    expect(message).toMatch(/: \/models\/small\/temperature_default Unexpected property\.$/);
  });

  it('an unknown provider', async () => {
    const data = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
    (data.models['small'] as Record<string, unknown>)['provider'] = 'bedrock';
    expect((await loadError(data)).message).toMatch(/: \/models\/small\/provider /);
  });

  it('a missing tier', async () => {
    const data = catalog() as unknown as { tiers: Record<string, unknown> };
    delete data.tiers['svc-pro'];
    expect((await loadError(data)).message).toMatch(/: \/tiers\/svc-pro Expected required property\.$/);
  });

  it('a tier naming an unknown alias', async () => {
    const data = catalog();
    data.tiers['svc-standard'] = ['big', 'ghost'];
    const { path, message } = await loadError(data);
    expect(message).toBe(`Catalog ${path}: /tiers/svc-standard names 'ghost', which is not in /models.`);
  });

  it('a tier naming an inherited object property, which is not a model', async () => {
    const data = catalog();
    data.tiers['svc-flash'] = ['toString'];
    expect((await loadError(data)).message).toMatch(/: \/tiers\/svc-flash names 'toString', which is not in \/models\.$/);
  });

  it('an option of another provider', async () => {
    const data = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
    (data.models['small'] as Record<string, unknown>)['thinking'] = 'adaptive';
    const { path, message } = await loadError(data);
    expect(message).toBe(`Catalog ${path}: /models/small/thinking Unexpected property.`);
  });

  it("an option's value out of its provider's range", async () => {
    const data = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
    data.models['claude'] = { ...model(), provider: 'anthropic', thinking: 'sometimes' };
    const { message } = await loadError(data);
    expect(message).toMatch(/: \/models\/claude\/thinking /);
  });

  it('names the providers when the provider is unknown', async () => {
    const data = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
    (data.models['small'] as Record<string, unknown>)['provider'] = 'bedrock';
    const { path, message } = await loadError(data);
    expect(message).toBe(`Catalog ${path}: /models/small/provider 'bedrock' is not one of openai-compatible, anthropic, gemini, simulator.`);
  });

  it('openai-compatible without base_url', async () => {
    const data = catalog();
    delete (data.models['remote'] as Record<string, unknown>)['base_url'];
    const { path, message } = await loadError(data);
    expect(message).toBe(`Catalog ${path}: /models/remote/base_url is required for provider openai-compatible.`);
  });

  it.each(['svc-flash', 'svc-pro', 'auto'])('the reserved alias %s under /models', async (alias) => {
    const data = catalog();
    data.models[alias] = model();
    const { path, message } = await loadError(data);
    expect(message).toBe(`Catalog ${path}: /models/${alias} uses a reserved alias.`);
  });
});

describe('loadCatalogFile: modes', () => {
  const embeddings = { mode: 'embeddings', context_window: 8192, input_price_per_mtok: 0.02 };

  it('gives an embeddings model no output: its max_output_tokens and output price are 0', async () => {
    const data = catalog() as unknown as { models: Record<string, unknown> };
    data.models['embed'] = { provider: 'simulator', upstream_model: 'sim-embed', ...embeddings };
    const file = await loadCatalogFile(await write(JSON.stringify(data)));
    expect(file.models['embed']).toMatchObject({ mode: 'embeddings', max_output_tokens: 0, output_price_per_mtok: 0 });
  });

  it.each(['max_output_tokens', 'output_price_per_mtok'])('refuses a chat model without %s', async (field) => {
    const data = catalog();
    delete (data.models['small'] as Record<string, unknown>)[field];
    const { path, message } = await loadError(data);
    expect(message).toBe(`Catalog ${path}: /models/small/${field} is required for a chat model.`);
  });

  it('refuses an embeddings model of a provider that has no embeddings', async () => {
    const data = catalog() as unknown as { models: Record<string, unknown> };
    data.models['claude-embed'] = { provider: 'anthropic', upstream_model: 'claude', ...embeddings };
    const { path, message } = await loadError(data);
    expect(message).toBe(`Catalog ${path}: /models/claude-embed/mode: provider anthropic has no embeddings.`);
  });

  it('refuses a tier naming an embeddings model', async () => {
    const data = catalog() as unknown as { models: Record<string, unknown>; tiers: Record<string, string[]> };
    data.models['embed'] = { provider: 'simulator', upstream_model: 'sim-embed', ...embeddings };
    data.tiers['svc-flash'] = ['small', 'embed'];
    const { path, message } = await loadError(data);
    expect(message).toBe(`Catalog ${path}: /tiers/svc-flash names 'embed', an embeddings model; tiers are chat models.`);
  });
});

describe('loadCatalogFile: deployment pools', () => {
  const ALIAS_FIELDS = { context_window: 8192, max_output_tokens: 512, input_price_per_mtok: 1, output_price_per_mtok: 2 };
  const openai = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    provider: 'openai-compatible',
    upstream_model: 'gpt-x',
    base_url: `https://${id}.example.com/v1`,
    ...extra,
  });
  const withModels = (models: Record<string, unknown>) => ({ ...catalog(), models: { ...catalog().models, ...models } });

  it("reads an alias with deployments as a model (the first deployment's provider fields) and a pool, defaults applied", async () => {
    const file = await loadCatalogFile(
      await write(
        JSON.stringify(
          withModels({
            pooled: { ...ALIAS_FIELDS, deployments: [openai('east', { weight: 3, api_key_env: 'EAST_KEY', rpm: 600, tpm: 200_000 }), openai('west')] },
          }),
        ),
      ),
    );
    expect(file.models['pooled']).toMatchObject({
      provider: 'openai-compatible',
      upstream_model: 'gpt-x',
      base_url: 'https://east.example.com/v1',
      context_window: 8192,
    });
    expect(file.pools['pooled']).toEqual({
      alias: 'pooled',
      routing: 'weighted',
      breaker: { failureRate: 0.5, minCalls: 10, windowMs: 30_000, cooldownMs: 30_000, maxCooldownMs: 600_000 },
      deployments: [
        {
          id: 'east',
          weight: 3,
          rpm: 600,
          tpm: 200_000,
          model: expect.objectContaining({ base_url: 'https://east.example.com/v1', api_key_env: 'EAST_KEY', input_price_per_mtok: 1 }),
        },
        { id: 'west', weight: 1, rpm: null, tpm: null, model: expect.objectContaining({ base_url: 'https://west.example.com/v1', output_price_per_mtok: 2 }) },
      ],
    });
  });

  it('makes an alias written as one target a pool of one, its id the alias, with the breaker it names', async () => {
    const data = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
    (data.models['small'] as Record<string, unknown>)['breaker'] = { min_calls: 3, cooldown_s: 1200 };
    const file = await loadCatalogFile(await write(JSON.stringify(data)));
    expect(file.pools['small']).toMatchObject({
      deployments: [{ id: 'small', weight: 1 }],
      breaker: { minCalls: 3, cooldownMs: 1_200_000, maxCooldownMs: 1_200_000 },
    });
  });

  it('names the deployment and its field when one is wrong', async () => {
    const { path, message } = await loadError(
      withModels({ pooled: { ...ALIAS_FIELDS, deployments: [openai('east'), openai('west', { base_url: 'ftp://x' })] } }),
    );
    expect(message).toMatch(new RegExp(`^Catalog ${path}: /models/pooled/deployments/1/base_url `));
    const missing = await loadError(
      withModels({ pooled: { ...ALIAS_FIELDS, deployments: [{ provider: 'openai-compatible', upstream_model: 'm', id: 'a' }] } }),
    );
    expect(missing.message).toMatch(/: \/models\/pooled\/deployments\/0\/base_url is required for provider openai-compatible\.$/);
  });

  it('refuses a pool without deployments, a pool with an upstream_model of its own, and an unknown routing', async () => {
    expect((await loadError(withModels({ pooled: { ...ALIAS_FIELDS, deployments: [] } }))).message).toMatch(/\/models\/pooled\/deployments /);
    expect((await loadError(withModels({ pooled: { ...ALIAS_FIELDS, upstream_model: 'x', deployments: [openai('a')] } }))).message).toMatch(
      /\/models\/pooled\/upstream_model Unexpected property\.$/,
    );
    expect((await loadError(withModels({ pooled: { ...ALIAS_FIELDS, routing: 'round-robin', deployments: [openai('a')] } }))).message).toMatch(
      /\/models\/pooled\/routing /,
    );
  });

  it('refuses deployments of different providers under one alias', async () => {
    const sim = { id: 'sim', provider: 'simulator', upstream_model: 's' };
    const { message } = await loadError(withModels({ pooled: { ...ALIAS_FIELDS, deployments: [openai('a'), sim] } }));
    expect(message).toMatch(/\/models\/pooled\/deployments\/1\/provider differs from the first deployment's/);
  });

  it('refuses a deployment id used twice, or used as the alias of a model written as one target', async () => {
    const twice = await loadError(withModels({ one: { ...ALIAS_FIELDS, deployments: [openai('a')] }, two: { ...ALIAS_FIELDS, deployments: [openai('a')] } }));
    expect(twice.message).toMatch(/deployment id 'a' of \/models\/two is also a deployment of \/models\/one; ids are unique across the catalog\.$/);
    const alias = await loadError(withModels({ pooled: { ...ALIAS_FIELDS, deployments: [openai('small')] } }));
    expect(alias.message).toMatch(/deployment id 'small' of \/models\/pooled is also an alias written as one target/);
  });

  it('checks a context-window fallback: a chat model of the catalog with a larger window', async () => {
    const withFallback = (to: string) => {
      const data = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
      (data.models['small'] as Record<string, unknown>)['context_window_fallback'] = to;
      return data;
    };
    const loaded = await loadCatalogFile(await write(JSON.stringify(withFallback('big'))));
    expect(loaded.models['small']?.context_window_fallback).toBe('big');
    expect((await loadError(withFallback('ghost'))).message).toMatch(/\/models\/small\/context_window_fallback names 'ghost', which is not in \/models\.$/);
    const smaller = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
    (smaller.models['big'] as Record<string, unknown>)['context_window_fallback'] = 'small';
    expect((await loadError(smaller)).message).toMatch(/\/models\/big\/context_window_fallback 'small' has no larger context window/);
  });

  it('refuses a breaker setting out of range', async () => {
    const data = catalog() as unknown as { models: Record<string, Record<string, unknown>> };
    (data.models['small'] as Record<string, unknown>)['breaker'] = { failure_rate: 1.5 };
    expect((await loadError(data)).message).toMatch(/\/models\/small\/breaker\/failure_rate /);
  });
});

describe('candidatesOf', () => {
  it('gives one candidate for a model alias, with its alias', () => {
    expect(candidatesOf(loaded(), 'big')).toEqual([{ ...model({ upstream_model: 'sim-big', context_window: 128_000 }), alias: 'big' }]);
  });

  it("gives a tier's models in the tier's order", () => {
    const candidates = candidatesOf(loaded(), 'svc-pro');
    expect(candidates?.map((c) => c.alias)).toEqual(['remote', 'big']);
    expect(candidates?.[0]).toMatchObject({ base_url: 'https://api.example.com/v1' });
    expect(candidatesOf(loaded(), 'svc-standard')?.map((c) => c.alias)).toEqual(['big', 'small']);
  });

  it('gives null for an unknown alias', () => {
    expect(candidatesOf(loaded(), 'gpt-5')).toBeNull();
  });

  it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty'])('gives null for the inherited property name %s', (alias) => {
    expect(candidatesOf(loaded(), alias)).toBeNull();
  });
});

describe('the catalogs of the repository', () => {
  it('catalog/dev.yaml loads', async () => {
    const file = await loadCatalogFile(join(ROOT, 'catalog/dev.yaml'));
    expect(Object.keys(file.models)).toEqual(['sim-flash', 'sim-standard', 'sim-reasoning', 'svc-embed']);
    expect(file.models['svc-embed']).toMatchObject({ provider: 'simulator', mode: 'embeddings' });
    expect(candidatesOf(file, 'svc-pro')?.map((c) => c.alias)).toEqual(['sim-reasoning', 'sim-standard']);
  });

  it('catalog/example.yaml loads', async () => {
    const file = await loadCatalogFile(join(ROOT, 'catalog/example.yaml'));
    expect(file.models['o3-mini']?.rejected_params).toContain('temperature');
    expect(candidatesOf(file, 'svc-flash')?.map((c) => c.alias)).toEqual(['gemini-2.5-flash', 'gpt-4o-mini', 'llama-3.1-8b-local']);
    expect(candidatesOf(file, 'svc-standard')?.map((c) => c.provider)).toEqual(['anthropic', 'openai-compatible', 'gemini']);
    expect(file.models['gpt-4o-azure']).toMatchObject({ azure: { api_version: '2024-10-21', deployment: 'gpt-4o-prod' } });
    expect(file.models['gemini-embedding']).toMatchObject({ provider: 'gemini', mode: 'embeddings' });
    expect(file.pools['gpt-4o-pooled']?.deployments.map((deployment) => [deployment.id, deployment.weight])).toEqual([
      ['gpt-4o-east', 3],
      ['gpt-4o-azure-west', 1],
    ]);
  });
});
