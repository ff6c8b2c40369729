/**
 * The catalog as OpenAI's model list (GET /v1/models): every alias and tier, in OpenAI's shape,
 * with what a client may want to know besides under `gateway` (what it serves, its limits, its
 * prices). Where the providers are and what the upstream models are called stays the operator's.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TIER_ALIASES, type CatalogFile, type CatalogModel } from './schema.ts';

const PerMtok = (description: string) => Type.Number({ minimum: 0, description: `${description}, in currency units per million tokens.` });

/** What the gateway tells about a model besides OpenAI's fields. */
export const ModelDetailsSchema = Type.Object({
  kind: Type.Union([Type.Literal('model'), Type.Literal('tier')]),
  mode: Type.Union([Type.Literal('chat'), Type.Literal('embeddings')]),
  candidates: Type.Optional(Type.Array(Type.String(), { description: 'For a tier, its models in the order they are tried.' })),
  context_window: Type.Integer({ minimum: 1 }),
  max_output_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  pricing: Type.Object({
    input_per_mtok: PerMtok('Input price'),
    output_per_mtok: Type.Optional(PerMtok('Output price')),
    cache_read_per_mtok: Type.Optional(PerMtok('Cache read price')),
    cache_write_per_mtok: Type.Optional(PerMtok('Cache write price')),
  }),
});

/** One entry of the list: OpenAI's model object, with the gateway's details under `gateway`. */
export const ModelObjectSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer({ description: "The catalog file's modification time (Unix seconds)." }),
  owned_by: Type.String({ description: 'The provider kind, or `gateway` for a tier.' }),
  gateway: ModelDetailsSchema,
});

/** What the gateway tells about a model besides OpenAI's fields. */
export type ModelDetails = Static<typeof ModelDetailsSchema>;

/** One entry of the list. */
export type ModelObject = Static<typeof ModelObjectSchema>;

function details(model: CatalogModel): ModelDetails {
  const chat = model.mode !== 'embeddings';
  const pricing: ModelDetails['pricing'] = { input_per_mtok: model.input_price_per_mtok };
  if (chat) pricing.output_per_mtok = model.output_price_per_mtok;
  if (model.cache_read_price_per_mtok !== undefined) pricing.cache_read_per_mtok = model.cache_read_price_per_mtok;
  if (model.cache_write_price_per_mtok !== undefined) pricing.cache_write_per_mtok = model.cache_write_price_per_mtok;
  const result: ModelDetails = { kind: 'model', mode: chat ? 'chat' : 'embeddings', context_window: model.context_window, pricing };
  if (chat) result.max_output_tokens = model.max_output_tokens;
  return result;
}

/**
 * Every entry, tiers first. A tier's limits are the least of its models' and its prices the
 * dearest (what its budget reservation assumes): a client planning against them is never surprised.
 */
export function listModels(catalog: CatalogFile, created: number): ModelObject[] {
  const tiers = TIER_ALIASES.map((tier): ModelObject => {
    const models = catalog.tiers[tier].map((alias) => catalog.models[alias] as CatalogModel);
    const dearest = (price: (model: CatalogModel) => number | undefined) => Math.max(...models.map((model) => price(model) ?? model.input_price_per_mtok));
    const gateway: ModelDetails = {
      kind: 'tier',
      mode: 'chat',
      candidates: [...catalog.tiers[tier]],
      context_window: Math.min(...models.map((model) => model.context_window)),
      max_output_tokens: Math.min(...models.map((model) => model.max_output_tokens)),
      pricing: {
        input_per_mtok: dearest((model) => model.input_price_per_mtok),
        output_per_mtok: dearest((model) => model.output_price_per_mtok),
        cache_read_per_mtok: dearest((model) => model.cache_read_price_per_mtok),
        cache_write_per_mtok: dearest((model) => model.cache_write_price_per_mtok),
      },
    };
    return { id: tier, object: 'model', created, owned_by: 'gateway', gateway };
  });
  const models = Object.entries(catalog.models).map(([alias, model]): ModelObject => ({
    id: alias,
    object: 'model',
    created,
    owned_by: model.provider,
    gateway: details(model),
  }));
  return [...tiers, ...models];
}
