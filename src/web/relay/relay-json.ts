import type { FastifyReply } from 'fastify';
import { ClientClosedRequestError, InternalError } from '../../errors/gateway-error.ts';
import { payloadToError } from '../../infra/events/reply-events.ts';
import type { Dispatch } from '../../infra/events/event-queue.ts';
import { DEPLOYMENT_HEADER } from './deployment-header.ts';

/** Waits for the one `result` (or `error`) of a non-streamed request and sends it. */
export async function relayJson(reply: FastifyReply, dispatch: Dispatch): Promise<FastifyReply> {
  const event = await dispatch.events.next();
  if (event?.type === 'result') {
    if (dispatch.events.deployment !== null) reply.header(DEPLOYMENT_HEADER, dispatch.events.deployment);
    return reply.type('application/json; charset=utf-8').send(event.payload);
  }
  if (event?.type === 'error') throw payloadToError(event.payload);
  // The events end without an answer when the client went away and its job was cancelled.
  if (!event && reply.raw.destroyed) throw new ClientClosedRequestError();
  throw new InternalError(event ? `Unexpected '${event.type}' event for a non-streamed request.` : 'The request ended without an answer.');
}
