import { Type, type Static, type TLiteral, type TObject } from '@sinclair/typebox';
import type { ProviderDescriptor } from '../../providers/descriptor.ts';
import { PROVIDER_DESCRIPTORS } from '../../providers/descriptors.ts';
import { MODEL_FIELDS, modelSchema, type LoadedModel, type ModelSchema } from '../../providers/model.ts';

/** The three service tiers of the spec. */
export const TIER_ALIASES = ['svc-flash', 'svc-standard', 'svc-pro'] as const;

/** An alias: letters, digits and `._:/-`. */
export const ALIAS_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:/-]*$';

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

type ModelSchemas<T extends readonly unknown[]> = { -readonly [K in keyof T]: ModelSchema<T[K]> };

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

/** A catalog model as loaded, of any provider (src/providers/model.ts says what loading adds). */
export type CatalogModel = LoadedModel<Static<typeof CatalogModelSchema>>;
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
