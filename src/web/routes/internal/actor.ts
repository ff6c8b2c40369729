import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../../domain/prompts/prompt-admin.ts';

/** Who made an internal change, as its audit event names them: the calling key, and the request. */
export function actorOf(request: FastifyRequest): Actor {
  return { actor: request.principal.keyId, requestId: request.id };
}
