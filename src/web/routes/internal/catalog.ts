import type { FastifyInstance } from 'fastify';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { BREAKER_STATES, type BreakerReply } from '../../../infra/redis/breaker-states.ts';
import { MODEL_MODES } from '../../../providers/model.ts';
import { ROUTING_STRATEGIES, TIER_ALIASES, type CatalogFile, type Deployment, type Pool } from '../../../domain/catalog/schema.ts';

/** Each deployment's breaker now, in the order asked (circuit-breaker-1.lua's state in Redis, shared by every worker). */
export type ReadCircuits = (deploymentIds: readonly string[]) => Promise<BreakerReply[]>;

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** GET /internal/v1/catalog's answer: every alias with its deployments and their breakers, and the tiers; never a key, nor a key's variable, nor a base URL. */
export const CatalogAnswerSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      alias: Type.String(),
      kind: Type.Union(MODEL_MODES.map((mode) => Type.Literal(mode))),
      provider: Type.String({ description: "The first deployment's provider kind." }),
      upstream_model: Type.String({ description: "The first deployment's upstream model." }),
      context_window: Type.Integer({ minimum: 1 }),
      routing: Type.Union(ROUTING_STRATEGIES.map((strategy) => Type.Literal(strategy))),
      deployments: Type.Array(
        Type.Object({
          id: Type.String({ description: 'The alias itself for an alias of one target.' }),
          provider: Type.String(),
          upstream_model: Type.String(),
          weight: Type.Number(),
          rpm: Type.Union([Type.Integer(), Type.Null()]),
          tpm: Type.Union([Type.Integer(), Type.Null()]),
          circuit: Type.Union(BREAKER_STATES.map((state) => Type.Literal(state))),
          reopens_at: Nullable(Type.String({ format: 'date-time', description: 'An open breaker: when it lets one probe call go.' })),
          paused_until: Nullable(Type.String({ format: 'date-time', description: "New calls wait until then (an upstream 429's Retry-After)." })),
        }),
      ),
    }),
  ),
  tiers: Type.Array(
    Type.Object({
      name: Type.Union(TIER_ALIASES.map((tier) => Type.Literal(tier))),
      candidates: Type.Array(Type.String(), { description: 'Aliases of `data`, in the order a request to the tier tries them.' }),
    }),
    { description: "In the catalog file's order." },
  ),
});

type CatalogEntry = Static<typeof CatalogAnswerSchema>['data'][number];

function entryJson(pool: Pool, breakers: BreakerReply[], now: number): CatalogEntry {
  // The catalog's schema gives every alias at least one deployment.
  const head = (pool.deployments[0] as Deployment).model;
  return {
    alias: pool.alias,
    kind: head.mode ?? 'chat',
    provider: head.provider,
    upstream_model: head.upstream_model,
    context_window: head.context_window,
    routing: pool.routing,
    deployments: pool.deployments.map((deployment, i) => {
      const breaker = breakers[i] as BreakerReply;
      return {
        id: deployment.id,
        provider: deployment.model.provider,
        upstream_model: deployment.model.upstream_model,
        weight: deployment.weight,
        rpm: deployment.rpm,
        tpm: deployment.tpm,
        circuit: breaker.state,
        reopens_at: breaker.state === 'open' ? new Date(breaker.openUntilMs).toISOString() : null,
        paused_until: breaker.pausedUntilMs > now ? new Date(breaker.pausedUntilMs).toISOString() : null,
      };
    }),
  };
}

/** The catalog's aliases with their deployments' breakers, read in one go, and its tiers. */
async function catalogJson(catalog: CatalogFile, circuits: ReadCircuits): Promise<Static<typeof CatalogAnswerSchema>> {
  const pools = Object.values(catalog.pools);
  const breakers = await circuits(pools.flatMap((pool) => pool.deployments.map((deployment) => deployment.id)));
  const now = Date.now();
  let next = 0;
  // The file's order, as `data` keeps the models'; the catalog's schema admits no key but the three tier names.
  const tiers = Object.entries(catalog.tiers) as Array<[(typeof TIER_ALIASES)[number], string[]]>;
  return {
    object: 'list',
    data: pools.map((pool) => entryJson(pool, breakers.slice(next, (next += pool.deployments.length)), now)),
    tiers: tiers.map(([name, candidates]) => ({ name, candidates: [...candidates] })),
  };
}

/** GET /internal/v1/catalog: the models the gateway serves, the state of their deployments, and the tiers (the operator tenant's admins). */
export async function internalCatalogRoutes(app: FastifyInstance, options: { catalog: CatalogFile; circuits: ReadCircuits }): Promise<void> {
  app.get('/catalog', { config: { permission: 'catalog.read' } }, async () => catalogJson(options.catalog, options.circuits));
}
