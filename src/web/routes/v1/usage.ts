import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { UsageCursor, UsageFilter, UsageGroup, UsageRecord, UsageRepository } from '../../../infra/store/repository.ts';
import { InvalidValueError } from '../../../errors/gateway-error.ts';
import { toUsageFields } from '../../../infra/store/usage-fields.ts';
import { decodeCursor, encodeCursor, nextDay, parseDay, parseLimit } from '../query-params.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';
import { AUTHENTICATED, errors, json, type RouteDocs } from '../../../wire/route-doc.ts';
import { UsageKindSchema, type UsageKind } from '../../../operations/index.ts';

const UsageQuerySchema = Type.Object(
  {
    since: Type.String(),
    until: Type.Optional(Type.String()),
    model: Type.Optional(Type.String({ minLength: 1 })),
    feature: Type.Optional(Type.String({ minLength: 1 })),
    key_id: Type.Optional(Type.String({ minLength: 1 })),
    limit: Type.Optional(Type.String()),
    cursor: Type.Optional(Type.String()),
    group_by: Type.Optional(Type.Union([Type.Literal('day'), Type.Literal('model'), Type.Literal('feature')])),
  },
  { additionalProperties: false },
);

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Count = () => Type.Integer({ minimum: 0 });

/** A usage record on the wire (snake_case; the tenant is implicit). */
export const UsageRecordSchema = Type.Object({
  object: Type.Literal('usage.record'),
  request_id: Type.String(),
  key_id: Type.String(),
  feature: Nullable(Type.String()),
  operation: UsageKindSchema,
  requested_model: Type.String({ description: 'The alias the client asked for (a model or a tier).' }),
  model: Type.String({ description: 'The catalog alias that answered (or was tried last).' }),
  provider: Type.String(),
  upstream_model: Type.String(),
  prompt_name: Nullable(Type.String()),
  prompt_version: Nullable(Type.Integer()),
  prompt_tokens: Count(),
  completion_tokens: Count(),
  total_tokens: Count(),
  cached_tokens: Count(),
  cache_write_tokens: Count(),
  reasoning_tokens: Count(),
  usage_source: Type.Union([Type.Literal('provider'), Type.Literal('estimated')]),
  cost_micros: Type.Integer({ description: "Micro-units of the tenant's currency." }),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')]),
  error_code: Nullable(Type.String()),
  queue_wait_ms: Type.Number(),
  ttft_ms: Nullable(Type.Number()),
  latency_ms: Type.Number(),
  stream: Type.Boolean(),
  pii_flags: Type.Array(Type.String()),
  response_id: Nullable(Type.String({ description: 'The Response object (`resp_…`) of a Responses request; null for other requests.' })),
  batch_id: Nullable(Type.String({ description: 'The batch (`batch_…`, `msgbatch_…`) a line of which the request was; null for a live request.' })),
  custom_id: Nullable(Type.String({ description: "That line's `custom_id`; null for a live request." })),
  deployment: Nullable(
    Type.String({
      description:
        'The deployment of `model` that answered (or was tried last), by its catalog id; the alias itself for a model of one target; null when no call was made.',
    }),
  ),
  cache_hit: Type.Boolean({ description: "Answered from the gateway's response cache: no upstream call, and no upstream cost." }),
  created_at: Type.String({ format: 'date-time' }),
});

/** One group of `group_by`: its day, model or feature, and its sums. */
const UsageGroupSchema = Type.Object({
  day: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  feature: Type.Optional(Nullable(Type.String())),
  requests: Count(),
  prompt_tokens: Count(),
  completion_tokens: Count(),
  total_tokens: Count(),
  cost_micros: Type.Integer(),
});

/** GET /v1/usage's answer: a page of records, or with `group_by` the sums of each group. */
export const UsageAnswerSchema = Type.Union([
  Type.Object({ object: Type.Literal('list'), data: Type.Array(UsageRecordSchema), has_more: Type.Boolean(), next_cursor: Nullable(Type.String()) }),
  Type.Object({
    object: Type.Literal('list'),
    group_by: Type.Union([Type.Literal('day'), Type.Literal('model'), Type.Literal('feature')]),
    data: Type.Array(UsageGroupSchema),
  }),
]);

/** The OpenAPI document's word on the route. */
export const usageDocs: RouteDocs = {
  'GET /v1/usage': {
    operationId: 'listUsage',
    summary: 'Query usage records',
    description: "The caller's tenant's usage records, newest first, or their sums by day, model or feature.",
    tags: ['Usage'],
    credentials: 'bearer',
    responses: { 200: json('Records, or sums.', UsageAnswerSchema), ...errors('openai', AUTHENTICATED) },
  },
};

/** A stored record as UsageRecordSchema says. */
export function usageRecordJson(record: UsageRecord): Static<typeof UsageRecordSchema> {
  const { tenant_id: _tenant, idempotency_key: _key, created_at, ...fields } = toUsageFields(record);
  // The stores take the operations' kinds only (PostgreSQL's CHECK, the mongoose enum).
  return { object: 'usage.record', ...fields, operation: fields.operation as UsageKind, created_at: created_at.toISOString() };
}

function groupJson(groupBy: string, group: UsageGroup) {
  return {
    [groupBy]: group.key,
    requests: group.requests,
    prompt_tokens: group.promptTokens,
    completion_tokens: group.completionTokens,
    total_tokens: group.totalTokens,
    cost_micros: group.costMicros,
  };
}

function parseCursor(value: string | undefined): UsageCursor | null {
  if (value === undefined) return null;
  const [time, requestId] = decodeCursor(value, 2) as [string, string];
  const createdAt = new Date(time);
  if (Number.isNaN(createdAt.getTime())) throw new InvalidValueError('cursor', "'cursor' is not a cursor this endpoint returned.");
  return { createdAt, requestId };
}

/** GET /v1/usage: the caller's tenant's usage records, newest first, or sums by day, model or feature. */
export async function usageRoutes(app: FastifyInstance, options: { usage: UsageRepository }): Promise<void> {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/v1/usage', { schema: { querystring: UsageQuerySchema }, config: { permission: 'usage.read' } }, async (request) => {
      const query = request.query;
      const since = parseDay('since', query.since);
      const until = query.until === undefined ? nextDay(new Date()) : nextDay(parseDay('until', query.until));
      if (until <= since) throw new InvalidValueError('until', "'until' must not be before 'since'.");
      const filter: UsageFilter = { tenantId: request.principal.tenantId, since, until };
      if (query.model) filter.model = query.model;
      if (query.feature) filter.feature = query.feature;
      if (query.key_id) filter.keyId = query.key_id;
      if (query.group_by) {
        const groups = await options.usage.sum(filter, query.group_by);
        return { object: 'list', group_by: query.group_by, data: groups.map((group) => groupJson(query.group_by as string, group)) };
      }
      const limit = parseLimit(query.limit, 100, 1000);
      const page = await options.usage.list(filter, limit + 1, parseCursor(query.cursor));
      const records = page.slice(0, limit);
      const last = records.at(-1);
      const hasMore = page.length > limit && last !== undefined;
      return {
        object: 'list',
        data: records.map(usageRecordJson),
        has_more: hasMore,
        next_cursor: hasMore ? encodeCursor([last.createdAt.toISOString(), last.requestId]) : null,
      };
    });
  rejectOtherMethods(app, '/v1/usage', ['GET']);
}
