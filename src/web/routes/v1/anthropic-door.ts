/**
 * Anthropic's API at the gateway's door, for an operation of its dialect: its clients (the SDK,
 * Claude Code) read the request id from `request-id` and name the API version they speak.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidValueError } from '../../../errors/gateway-error.ts';
import { ANTHROPIC_VERSION } from '../../../wire/anthropic-messages.ts';

/** Adds the `request-id` header to every answer of the plugin's routes, and refuses an `anthropic-version` that is not a date. */
export function anthropicDoor(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('request-id', request.id);
    const version = request.headers['anthropic-version'];
    if (version !== undefined && (typeof version !== 'string' || !ANTHROPIC_VERSION.test(version)))
      throw new InvalidValueError('anthropic-version', "The anthropic-version header must be a date such as '2023-06-01'.");
  });
  // The app's own onRequest hooks (authentication) run before this plugin's and answer their
  // refusals from there; the header must be on those answers too. A stream is hijacked and sends
  // the headers set above.
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('request-id', request.id);
    return payload;
  });
}
