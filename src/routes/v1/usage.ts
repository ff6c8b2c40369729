import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { UsageCursor, UsageFilter, UsageGroup, UsageRecord, UsageRepository } from '../../store/repository.ts';
import { InvalidValueError } from '../../errors/gateway-error.ts';
import { toUsageFields } from '../../store/usage-fields.ts';
import { decodeCursor, encodeCursor, nextDay, parseDay, parseLimit } from '../query-params.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

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

/** A usage record on the wire (snake_case; the tenant is implicit). */
export function usageRecordJson(record: UsageRecord) {
  const { tenant_id: _tenant, created_at, ...fields } = toUsageFields(record);
  return { object: 'usage.record', ...fields, created_at: created_at.toISOString() };
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
  app.withTypeProvider<TypeBoxTypeProvider>().get('/v1/usage', { schema: { querystring: UsageQuerySchema }, config: { operation: 'usage.read' } }, async (request) => {
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
