/**
 * GET and DELETE /v1/responses/:id. The gateway stores no responses, so reading or deleting one is
 * a 404 that says so rather than a bare unknown route.
 */
import { ResourceNotFoundError } from '../../errors/gateway-error.ts';
import type { SideRequest, SideRoute } from '../operation.ts';
import { storedResponseDoc } from './docs.ts';

function refuse({ params }: SideRequest<unknown>): never {
  throw new ResourceNotFoundError(`The response '${params.id}'`, 'this gateway stores no responses (each is answered with store: false)');
}

/** Reading and deleting a stored response, both refused. */
export const storedResponseRoutes: readonly SideRoute[] = [
  { method: 'GET', path: '/v1/responses/:id', doc: storedResponseDoc('getResponse', 'Retrieve a stored response'), answer: refuse },
  { method: 'DELETE', path: '/v1/responses/:id', doc: storedResponseDoc('deleteResponse', 'Delete a stored response'), answer: refuse },
];
