/**
 * Kept responses (OpenAI's Responses API beyond create): retrieve, with a background stream
 * resumed after any sequence number; cancel a background response; delete; list input items.
 * Another tenant's response is unknown here, exactly as one that never existed.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Queue } from 'bullmq';
import { InvalidValueError, NotCancellableError, ResourceNotFoundError } from '../../../errors/gateway-error.ts';
import type { JobBatch } from '../../../infra/queue/job.ts';
import type { RequestJob } from '../../../operations/index.ts';
import type { KeptResponse, KeptResponses } from '../../../infra/responses/kept-responses.ts';
import { isFinal } from '../../../infra/responses/response-state.ts';
import type { StoredResponse } from '../../../infra/store/repository.ts';
import type { Admission } from '../../../domain/admission/admission.ts';
import type { SseFraming } from '../../../operations/sse-framing.ts';
import { EventQueue, type Dispatch } from '../../../infra/events/event-queue.ts';
import { groupPayloads, payloadParts } from '../../../infra/events/reply-events.ts';
import { relaySse, type SseOptions } from '../../relay/relay-sse.ts';
import { parseLimit } from '../query-params.ts';
import { AUTHENTICATED, errors, json, type RouteDocs } from '../../../wire/route-doc.ts';

/** What the routes need, built by the composition root. */
export interface ResponseRouteDeps {
  kept: KeptResponses;
  /** The request queue's shards, to take back a cancelled response's job that no worker has started. */
  queues: ReadonlyArray<Queue<JobBatch>>;
  admission: Pick<Admission, 'giveBack'>;
  /** Tells the workers to stop a running request (of that queue shard). */
  cancelRunning(shard: number, requestId: string): Promise<void>;
  /** Ends the events of a request whose job was taken back, for the stream that waits on them. */
  endStream(tenantId: string, requestId: string, replyChannel: string): Promise<void>;
  /** Follows a request's events from its stream, after the gateway's sequence number `afterSeq`, until its end. */
  follow(tenantId: string, requestId: string, afterSeq: number, finished: boolean): Dispatch;
  /** Records a response cancelled here (its worker's end records none) and sends its webhook event. */
  ended(record: StoredResponse): Promise<void>;
  framing: SseFraming;
  sse: SseOptions;
  /** How long a deleted response's tombstone, and a finished background response, stay in Redis. */
  keptTtlMs: number;
}

// Any id is looked up: one of no response, however long, is a 404 (the URL's own limit bounds it).
const IdParams = Type.Object({ id: Type.String({ minLength: 1 }) });

const RetrieveQuery = Type.Object({
  stream: Type.Optional(Type.String()),
  starting_after: Type.Optional(Type.String()),
  include: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  include_obfuscation: Type.Optional(Type.String()),
});

const InputItemsQuery = Type.Object({
  after: Type.Optional(Type.String({ minLength: 1 })),
  limit: Type.Optional(Type.String()),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  include: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
});

function notFound(id: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`The response '${id}'`);
}

async function mustFind(deps: ResponseRouteDeps, tenantId: string, id: string): Promise<KeptResponse> {
  const kept = await deps.kept.find(tenantId, id);
  if (!kept) throw notFound(id);
  return kept;
}

/** `starting_after`: a sequence number, 0 or more; absent: from the first event, response.queued included. */
function parseStartingAfter(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^\d{1,15}$/.test(value))
    throw new InvalidValueError('starting_after', "'starting_after' must be a non-negative integer: the sequence number of the last event received.");
  return Number(value);
}

function parseFlag(value: string | undefined, param: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new InvalidValueError(param, `'${param}' must be true or false.`);
}

// Every event the Responses translation writes has its sequence number second, after its type.
const SEQUENCE_NUMBER = /^\{"type":"[^"]*","sequence_number":(\d+)/;

/** The queued Response a background stream opened with, rebuilt from the response as it stands. */
function queuedEvent(body: Record<string, unknown>): string {
  const response = { ...body, status: 'queued', output: [], output_text: '', error: null, incomplete_details: null, usage: null, completed_at: null };
  return JSON.stringify({ type: 'response.queued', sequence_number: 0, response });
}

/** The request's events with the Responses events numbered `after` or lower left out of each chunk. */
function eventsAfter(source: Dispatch, after: number): Dispatch {
  const events = new EventQueue();
  void (async () => {
    for await (const event of source.events) {
      if (event.type !== 'chunk') {
        events.push(event);
        continue;
      }
      const parts = payloadParts(event.payload).filter((part) => Number(SEQUENCE_NUMBER.exec(part)?.[1] ?? Infinity) > after);
      if (parts.length > 0) events.push({ ...event, payload: groupPayloads(parts) });
    }
    events.close();
  })();
  return { events, cancel: source.cancel };
}

/** Follows a background stream from `startingAfter` (null: from its first event) to its end, live. */
function resumeStream(deps: ResponseRouteDeps, request: FastifyRequest, reply: FastifyReply, kept: KeptResponse, startingAfter: number | null) {
  const live = kept.live;
  if (!kept.background || !kept.stream || !live)
    throw new InvalidValueError(
      'stream',
      kept.background && kept.stream
        ? 'The events of this response are no longer kept; retrieve it without stream.'
        : 'Only a response created with background and stream both true can be streamed again; retrieve it without stream.',
    );
  const dispatch = eventsAfter(deps.follow(request.principal.tenantId, live.requestId, 0, isFinal(live.status)), startingAfter ?? 0);
  reply.raw.once('close', () => dispatch.cancel());
  return relaySse(request, reply, dispatch, deps.framing, deps.sse, startingAfter === null ? queuedEvent(kept.body) : undefined);
}

/**
 * Takes a cancelled response's job back when no worker has started it and it carries nothing
 * else: its admission is given back and it ends here. Otherwise the worker that takes or runs it
 * finds it cancelled and ends it, charging what it produced.
 */
async function takeBack(deps: ResponseRouteDeps, kept: KeptResponse, tenantId: string): Promise<boolean> {
  const live = kept.live;
  const queue = live ? deps.queues[live.shard] : undefined;
  if (!live || !queue) return false;
  const job = await queue.getJob(live.requestId);
  const data = job?.data.requests[0] as RequestJob | undefined;
  if (!job || job.data.requests.length !== 1 || data?.requestId !== live.requestId) return false;
  const removed = await job.remove().then(
    () => true,
    () => false,
  );
  if (!removed) return false;
  await deps.admission.giveBack({ tenantId, requestId: live.requestId, claimKey: data.idempotencyKey, budgetKeys: data.budgetKeys });
  if (live.stream) await deps.endStream(tenantId, live.requestId, data.replyChannel);
  return true;
}

/** Cancels a background response; a finished one is answered as it is. */
async function cancel(deps: ResponseRouteDeps, tenantId: string, id: string): Promise<Record<string, unknown>> {
  const kept = await mustFind(deps, tenantId, id);
  if (!kept.background) throw new NotCancellableError(id);
  if (isFinal(kept.status) || !kept.live) return kept.body;
  const cancelled = { ...kept.body, status: 'cancelled' };
  const found = await deps.kept.states.cancel(tenantId, id, JSON.stringify(cancelled));
  if (found !== 'queued' && found !== 'in_progress') return (await mustFind(deps, tenantId, id)).body;
  // The state is cancelled now: the worker's end leaves it so and records nothing of the response
  // (its usage only), so its final record and webhook event are this one's to send.
  if (!(found === 'queued' && (await takeBack(deps, kept, tenantId)))) await deps.cancelRunning(kept.live.shard, kept.live.requestId);
  await deps.ended({
    id,
    tenantId,
    status: 'cancelled',
    background: true,
    response: cancelled,
    input: kept.input ?? [],
    previousResponseId: kept.previousResponseId,
    createdAt: new Date(Number(kept.body.created_at) * 1000),
    expiresAt: kept.live.store ? null : new Date(Date.now() + deps.keptTtlMs),
  });
  return cancelled;
}

/** GET, DELETE /v1/responses/{id}, POST /v1/responses/{id}/cancel, GET /v1/responses/{id}/input_items. */
export async function responseRoutes(app: FastifyInstance, deps: ResponseRouteDeps): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const config = { permission: 'responses.create' as const, errorDialect: 'openai' as const };
  routes.get('/v1/responses/:id', { schema: { params: IdParams, querystring: RetrieveQuery }, config }, async (request, reply) => {
    const { id } = request.params;
    const stream = parseFlag(request.query.stream, 'stream');
    const startingAfter = parseStartingAfter(request.query.starting_after);
    const kept = await mustFind(deps, request.principal.tenantId, id);
    if (stream) return resumeStream(deps, request, reply, kept, startingAfter);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(kept.body));
  });
  routes.delete('/v1/responses/:id', { schema: { params: IdParams }, config }, async (request) => {
    const { id } = request.params;
    const { tenantId } = request.principal;
    const live = (await deps.kept.find(tenantId, id))?.live;
    if (!(await deps.kept.delete(tenantId, id, deps.keptTtlMs))) throw notFound(id);
    // A deleted response's job does no more work: a worker that takes it finds it deleted, one that runs it is stopped.
    if (live && !isFinal(live.status)) await deps.cancelRunning(live.shard, live.requestId);
    return { id, object: 'response', deleted: true };
  });
  routes.post('/v1/responses/:id/cancel', { schema: { params: IdParams }, config }, async (request, reply) => {
    const body = await cancel(deps, request.principal.tenantId, request.params.id);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
  routes.get('/v1/responses/:id/input_items', { schema: { params: IdParams, querystring: InputItemsQuery }, config }, async (request) => {
    const { id } = request.params;
    const { after, order } = request.query;
    const page = await deps.kept.listInput(request.principal.tenantId, id, {
      after: after ?? null,
      limit: parseLimit(request.query.limit, 20, 100),
      order: order ?? 'desc',
    });
    if (!page) throw notFound(id);
    return { object: 'list', data: page.items, first_id: page.items[0]?.id ?? null, last_id: page.items.at(-1)?.id ?? null, has_more: page.hasMore };
  });
}

const ResponseObject = Type.Object({ id: Type.String(), object: Type.Literal('response'), status: Type.String() }, { additionalProperties: true });
const NOT_FOUND = { 404: 'No response of this id (`not_found`): it never existed, is another tenant’s, was deleted or is past its retention.' };

/** The OpenAPI document's word on the routes. */
export const responseDocs: RouteDocs = {
  'GET /v1/responses/:id': {
    operationId: 'getResponse',
    summary: 'Retrieve a response',
    description:
      'A kept response (a stored or a background one) as it stands. With `stream=true`, a background stream again, from after `starting_after` (a sequence number) to its end, live.',
    tags: ['Responses'],
    credentials: 'bearer',
    responses: { 200: json('The Response object (or, with stream, its events).', ResponseObject), ...errors('openai', [...AUTHENTICATED, 404], NOT_FOUND) },
  },
  'DELETE /v1/responses/:id': {
    operationId: 'deleteResponse',
    summary: 'Delete a response',
    description: 'Deletes the response and its items for good.',
    tags: ['Responses'],
    credentials: 'bearer',
    responses: {
      200: json('Deleted.', Type.Object({ id: Type.String(), object: Type.Literal('response'), deleted: Type.Literal(true) })),
      ...errors('openai', [...AUTHENTICATED, 404], NOT_FOUND),
    },
  },
  'POST /v1/responses/:id/cancel': {
    operationId: 'cancelResponse',
    summary: 'Cancel a background response',
    description:
      'Stops a queued or running background response (status `cancelled`; what it produced is charged, the rest of its reservation given back). A finished one is answered unchanged.',
    tags: ['Responses'],
    credentials: 'bearer',
    responses: { 200: json('The Response object.', ResponseObject), ...errors('openai', [...AUTHENTICATED, 404], NOT_FOUND) },
  },
  'GET /v1/responses/:id/input_items': {
    operationId: 'listInputItems',
    summary: "List a response's input items",
    description:
      'The input items of a stored response (its own, not those of the responses it continued), paged with `after`, `limit` (1–100, default 20) and `order` (default `desc`).',
    tags: ['Responses'],
    credentials: 'bearer',
    responses: {
      200: json(
        'A page of items.',
        Type.Object({
          object: Type.Literal('list'),
          data: Type.Array(Type.Object({ id: Type.String() }, { additionalProperties: true })),
          first_id: Type.Union([Type.String(), Type.Null()]),
          last_id: Type.Union([Type.String(), Type.Null()]),
          has_more: Type.Boolean(),
        }),
      ),
      ...errors('openai', [...AUTHENTICATED, 404], NOT_FOUND),
    },
  },
};
