import { Type, type Static } from '@sinclair/typebox';

/** The three service tiers of the spec. */
export const TIER_ALIASES = ['svc-flash', 'svc-standard', 'svc-pro'] as const;

/** Options of the built-in simulator provider (ignored by other providers). */
export const SimulatorOptionsSchema = Type.Object(
  {
    latency_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'Delay before the first token.' })),
    tokens_per_second: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Streaming rate; absent means as fast as possible.' })),
    completion_tokens: Type.Optional(Type.Integer({ minimum: 1, description: 'Length of the answer when max_tokens does not cap it.' })),
    fault: Type.Optional(
      Type.Object(
        {
          kind: Type.Union([Type.Literal('429'), Type.Literal('500'), Type.Literal('timeout'), Type.Literal('broken_stream')]),
          rate: Type.Number({ minimum: 0, maximum: 1, description: 'Probability of the fault per call.' }),
          retry_after_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** One model alias of the catalog file. */
export const CatalogModelSchema = Type.Object(
  {
    provider: Type.Union([Type.Literal('openai-compatible'), Type.Literal('simulator')]),
    upstream_model: Type.String({ minLength: 1 }),
    base_url: Type.Optional(Type.String({ pattern: '^https?://' })),
    api_key_env: Type.Optional(Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$' })),
    context_window: Type.Integer({ minimum: 1 }),
    max_output_tokens: Type.Integer({ minimum: 1 }),
    input_price_per_mtok: Type.Number({ minimum: 0, description: 'Currency units per million prompt tokens.' }),
    output_price_per_mtok: Type.Number({ minimum: 0, description: 'Currency units per million completion tokens.' }),
    rejected_params: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    simulator: Type.Optional(SimulatorOptionsSchema),
  },
  { additionalProperties: false },
);

/** The catalog file: aliases, and the tiers as ordered candidate lists of aliases. */
export const CatalogFileSchema = Type.Object(
  {
    models: Type.Record(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:/-]*$' }), CatalogModelSchema),
    tiers: Type.Object(
      {
        'svc-flash': Type.Array(Type.String(), { minItems: 1 }),
        'svc-standard': Type.Array(Type.String(), { minItems: 1 }),
        'svc-pro': Type.Array(Type.String(), { minItems: 1 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** A catalog model entry as written in the file. */
export type CatalogModel = Static<typeof CatalogModelSchema>;
/** The parsed catalog file. */
export type CatalogFile = Static<typeof CatalogFileSchema>;
/** Simulator options of a catalog entry. */
export type SimulatorOptions = Static<typeof SimulatorOptionsSchema>;
