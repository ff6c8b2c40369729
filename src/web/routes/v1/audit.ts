import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { AuditEvent, AuditFilter, AuditRepository } from '../../../infra/store/repository.ts';
import { InvalidValueError } from '../../../errors/gateway-error.ts';
import { toAuditFields } from '../../../infra/store/audit-fields.ts';
import { decodeCursor, encodeCursor, parseLimit, parseTime } from '../query-params.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';
import { AUTHENTICATED, errors, json, type RouteDocs } from '../../../wire/route-doc.ts';

const AuditQuerySchema = Type.Object(
  {
    since: Type.Optional(Type.String()),
    until: Type.Optional(Type.String()),
    action: Type.Optional(Type.String({ minLength: 1 })),
    actor: Type.Optional(Type.String({ minLength: 1 })),
    limit: Type.Optional(Type.String()),
    cursor: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** An audit event on the wire, with its place in the tenant's hash chain (the tenant is implicit). */
export const AuditEventSchema = Type.Object({
  object: Type.Literal('audit.event'),
  id: Type.String(),
  seq: Type.Integer({ minimum: 1, description: "The event's number in its tenant's chain." }),
  actor: Type.String({ description: 'A key id, `cli`, or `anonymous`.' }),
  action: Type.String({ description: 'E.g. `key.created`, `prompt.activated`, `auth.denied`.' }),
  target: Type.Union([Type.String(), Type.Null()]),
  outcome: Type.Union((['success', 'denied', 'blocked', 'flagged', 'failure'] as const).map((outcome) => Type.Literal(outcome))),
  request_id: Type.Union([Type.String(), Type.Null()]),
  details: Type.Record(Type.String(), Type.Unknown()),
  prev_hash: Type.String(),
  hash: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});

/** GET /v1/audit's answer: a page of events, newest first. */
export const AuditPageSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(AuditEventSchema),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

/** The OpenAPI document's word on the route. */
export const auditDocs: RouteDocs = {
  'GET /v1/audit': {
    operationId: 'listAuditEvents',
    summary: 'Read audit events',
    description: "The caller's tenant's audit events, newest first, filtered by time, action and actor.",
    tags: ['Audit'],
    credentials: 'bearer',
    responses: { 200: json('A page of events.', AuditPageSchema), ...errors('openai', AUTHENTICATED) },
  },
};

/** A stored event as AuditEventSchema says. */
export function auditEventJson(event: AuditEvent): Static<typeof AuditEventSchema> {
  const { tenant_id: _tenant, created_at, ...fields } = toAuditFields(event);
  return { object: 'audit.event', ...fields, created_at: created_at.toISOString() };
}

function beforeSeq(cursor: string | undefined): number | null {
  if (cursor === undefined) return null;
  const seq = Number(decodeCursor(cursor, 1)[0]);
  if (!Number.isSafeInteger(seq) || seq < 1) throw new InvalidValueError('cursor', "'cursor' is not a cursor this endpoint returned.");
  return seq;
}

/** GET /v1/audit: the caller's tenant's audit events, newest first, filtered by time, action and actor. */
export async function auditRoutes(app: FastifyInstance, options: { audit: AuditRepository }): Promise<void> {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/v1/audit', { schema: { querystring: AuditQuerySchema }, config: { permission: 'audit.read' } }, async (request) => {
      const query = request.query;
      const filter: AuditFilter = { tenantId: request.principal.tenantId };
      if (query.since) filter.since = parseTime('since', query.since);
      if (query.until) filter.until = parseTime('until', query.until);
      if (query.action) filter.action = query.action;
      if (query.actor) filter.actor = query.actor;
      const limit = parseLimit(query.limit, 100, 1000);
      const page = await options.audit.list(filter, limit + 1, beforeSeq(query.cursor));
      const events = page.slice(0, limit);
      const last = events.at(-1);
      const hasMore = page.length > limit && last !== undefined;
      return { object: 'list', data: events.map(auditEventJson), has_more: hasMore, next_cursor: hasMore ? encodeCursor([String(last.seq)]) : null };
    });
  rejectOtherMethods(app, '/v1/audit', ['GET']);
}
