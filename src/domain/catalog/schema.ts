import { Type, type Static, type TLiteral, type TObject } from '@sinclair/typebox';
import type { ProviderDescriptor } from '../../providers/descriptor.ts';
import { PROVIDER_DESCRIPTORS, type ProviderName } from '../../providers/descriptors.ts';

/** The three service tiers of the spec. */
export const TIER_ALIASES = ['svc-flash', 'svc-standard', 'svc-pro'] as const;

/** What a model serves: chat (completions, messages, responses), or embeddings. */
export const MODEL_MODES = ['chat', 'embeddings'] as const;

/** An alias: letters, digits and `._:/-`. */
export const ALIAS_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:/-]*$';

/** What every model of the catalog has, whatever its provider. */
export const MODEL_FIELDS = {
  upstream_model: Type.String({ minLength: 1 }),
  mode: Type.Optional(
    Type.Union(
      MODEL_MODES.map((mode) => Type.Literal(mode)),
      { description: "What the model serves; absent: 'chat'." },
    ),
  ),
  context_window: Type.Integer({ minimum: 1, description: "The prompt and the answer together; for an embeddings model, each input's tokens." }),
  max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, description: 'Required for a chat model.' })),
  input_price_per_mtok: Type.Number({ minimum: 0, description: 'Currency units per million prompt tokens.' }),
  output_price_per_mtok: Type.Optional(Type.Number({ minimum: 0, description: 'Currency units per million completion tokens; required for a chat model.' })),
  cache_read_price_per_mtok: Type.Optional(
    Type.Number({ minimum: 0, description: "Per million prompt tokens read from the provider's cache; absent: the input price." }),
  ),
  cache_write_price_per_mtok: Type.Optional(
    Type.Number({ minimum: 0, description: "Per million prompt tokens written to the provider's cache; absent: the input price." }),
  ),
  batch_price: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'A batch line costs this fraction of the live prices; absent: 1 (the live price).' }),
  ),
  rejected_params: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  context_window_fallback: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'A chat model with a larger window that takes a prompt too long for this one, instead of a 422; absent: the 422.',
    }),
  ),
  timeouts: Type.Optional(
    Type.Object(
      {
        connect_ms: Type.Optional(
          Type.Integer({
            minimum: 1,
            description: "TCP and TLS to the deployment's origin (the shortest of the models sharing an origin); absent: UPSTREAM_CONNECT_TIMEOUT_MS.",
          }),
        ),
        first_token_ms: Type.Optional(
          Type.Integer({
            minimum: 1,
            description: "From sending the call to its first token (a stream's first chunk, a plain answer's headers); absent: UPSTREAM_HEADERS_TIMEOUT_MS.",
          }),
        ),
        between_tokens_ms: Type.Optional(
          Type.Integer({ minimum: 1, description: 'The longest silence between two chunks of an answer; absent: UPSTREAM_BODY_TIMEOUT_MS.' }),
        ),
        total_ms: Type.Optional(
          Type.Integer({ minimum: 1, description: 'One attempt, from sending to the last byte; absent: what is left of RETRY_BUDGET_MS.' }),
        ),
      },
      { additionalProperties: false, description: "This model's limits on one call, each within what is left of the request's retry budget." },
    ),
  ),
  breaker: Type.Optional(
    Type.Object(
      {
        failure_rate: Type.Optional(
          Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'Share of failed calls in the window that opens it; absent: 0.5.' }),
        ),
        min_calls: Type.Optional(Type.Integer({ minimum: 1, description: 'Calls in the window before the share counts; absent: 10.' })),
        window_s: Type.Optional(Type.Integer({ minimum: 1, description: 'The sliding window, seconds; absent: 30.' })),
        cooldown_s: Type.Optional(
          Type.Number({
            exclusiveMinimum: 0,
            description: 'How long it stays open before one probe; absent: 30. Doubled at each failed probe, up to 10 minutes.',
          }),
        ),
      },
      { additionalProperties: false, description: "Each deployment's circuit breaker." },
    ),
  ),
};

/** How a pooled alias picks a deployment for each attempt. */
export const ROUTING_STRATEGIES = ['weighted', 'least-busy', 'latency'] as const;

/** What a deployment of a pooled alias adds to its provider's fields. */
export const DEPLOYMENT_FIELDS = {
  id: Type.String({
    pattern: ALIAS_PATTERN,
    description: 'Unique across the catalog; named in usage records and the x-gateway-deployment header.',
  }),
  weight: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Share of the traffic against its siblings; absent: 1.' })),
  rpm: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Calls a minute it takes, across every worker: a full deployment is passed over, then waited for.' }),
  ),
  tpm: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Tokens a minute it takes, counted as its calls end: one over it is passed over until it drains.' }),
  ),
};

type ModelSchema<D> = D extends ProviderDescriptor ? TObject<{ provider: TLiteral<D['name']> } & typeof MODEL_FIELDS & D['options']> : never;
type ModelSchemas<T extends readonly unknown[]> = { -readonly [K in keyof T]: ModelSchema<T[K]> };

/** The catalog entry of one provider kind: the common fields and the provider's options, nothing else. */
function modelSchema<D extends ProviderDescriptor>(descriptor: D): ModelSchema<D> {
  return Type.Object(
    { provider: Type.Literal(descriptor.name), ...MODEL_FIELDS, ...descriptor.options },
    { additionalProperties: false },
  ) as unknown as ModelSchema<D>;
}

/** One deployment of a pooled alias: where to call, with the provider's own options; the alias keeps the prices and limits. */
type DeploymentSchemaOf<D> = D extends ProviderDescriptor
  ? TObject<{ provider: TLiteral<D['name']>; upstream_model: (typeof MODEL_FIELDS)['upstream_model'] } & typeof DEPLOYMENT_FIELDS & D['options']>
  : never;
type DeploymentSchemas<T extends readonly unknown[]> = { -readonly [K in keyof T]: DeploymentSchemaOf<T[K]> };

function deploymentSchema<D extends ProviderDescriptor>(descriptor: D): DeploymentSchemaOf<D> {
  return Type.Object(
    { provider: Type.Literal(descriptor.name), upstream_model: MODEL_FIELDS.upstream_model, ...DEPLOYMENT_FIELDS, ...descriptor.options },
    { additionalProperties: false },
  ) as unknown as DeploymentSchemaOf<D>;
}

/** Each provider kind's deployment schema, by name. */
export const DEPLOYMENT_SCHEMAS: ReadonlyMap<string, TObject> = new Map(
  PROVIDER_DESCRIPTORS.map((descriptor) => [descriptor.name, deploymentSchema(descriptor)]),
);

/** One deployment as written: a union over the providers' descriptors. */
export const DeploymentSchema = Type.Union(PROVIDER_DESCRIPTORS.map(deploymentSchema) as DeploymentSchemas<typeof PROVIDER_DESCRIPTORS>);

const { upstream_model: _upstream, ...ALIAS_FIELDS } = MODEL_FIELDS;

/** A pooled alias's own fields, besides its deployments. */
export const POOL_FIELDS = {
  ...ALIAS_FIELDS,
  routing: Type.Optional(
    Type.Union(
      ROUTING_STRATEGIES.map((name) => Type.Literal(name)),
      { description: "absent: 'weighted'." },
    ),
  ),
};

/** A pooled alias: the alias's fields, several deployments (each checked against its provider's schema), and how to pick one. */
export const PooledModelSchema = Type.Object({ ...POOL_FIELDS, deployments: Type.Array(DeploymentSchema, { minItems: 1 }) }, { additionalProperties: false });

/** Each provider kind's model schema, by name (load-catalog.ts validates a model against its provider's alone, for errors that name the field). */
export const MODEL_SCHEMAS: ReadonlyMap<string, TObject> = new Map(PROVIDER_DESCRIPTORS.map((descriptor) => [descriptor.name, modelSchema(descriptor)]));

/** One model alias of the catalog file: a union over the providers' descriptors. */
export const CatalogModelSchema = Type.Union(PROVIDER_DESCRIPTORS.map(modelSchema) as ModelSchemas<typeof PROVIDER_DESCRIPTORS>);

/** The tiers: each an ordered list of model aliases. */
export const TiersSchema = Type.Object(
  {
    'svc-flash': Type.Array(Type.String(), { minItems: 1 }),
    'svc-standard': Type.Array(Type.String(), { minItems: 1 }),
    'svc-pro': Type.Array(Type.String(), { minItems: 1 }),
  },
  { additionalProperties: false },
);

/** The catalog file: aliases, and the tiers as ordered candidate lists of aliases. */
export const CatalogFileSchema = Type.Object(
  { models: Type.Record(Type.String({ pattern: ALIAS_PATTERN }), Type.Union([CatalogModelSchema, PooledModelSchema])), tiers: TiersSchema },
  { additionalProperties: false },
);

/**
 * A catalog model as loaded: a chat model has its output fields (the loader refuses one without),
 * and an embeddings model, which produces no tokens, gets 0 for them.
 */
export type CatalogModel = Static<typeof CatalogModelSchema> & { max_output_tokens: number; output_price_per_mtok: number };
/** The catalog entry of one provider kind. */
export type ModelOf<N extends ProviderName> = Extract<CatalogModel, { provider: N }>;
/** A catalog file as written (what the loader reads). */
export type WrittenCatalog = Static<typeof CatalogFileSchema>;
/** A circuit breaker's settings, defaults applied. */
export interface BreakerSettings {
  failureRate: number;
  minCalls: number;
  windowMs: number;
  cooldownMs: number;
  maxCooldownMs: number;
}

/** One place an alias's calls can go: the alias's entry with the deployment's provider fields. */
export interface Deployment {
  id: string;
  weight: number;
  /** Its provider quota, per minute; null: none set. */
  rpm: number | null;
  tpm: number | null;
  model: CatalogModel;
}

/** What an alias's calls are spread over; an alias written as one target is a pool of one, its id the alias. */
export interface Pool {
  alias: string;
  routing: (typeof ROUTING_STRATEGIES)[number];
  breaker: BreakerSettings;
  deployments: readonly Deployment[];
}

/** The parsed catalog file: each alias as its model (the first deployment's provider fields for a pool) and as its pool. */
export type CatalogFile = Omit<Static<typeof CatalogFileSchema>, 'models'> & { models: Record<string, CatalogModel>; pools: Record<string, Pool> };
