import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { JobBatch, JobCommon } from '../../infra/queue/job.ts';
import { MalformedRequestError, RouteNotFoundError } from '../../errors/gateway-error.ts';

/** Where the board is served. */
export const QUEUE_BOARD_PREFIX = '/internal/queues';

// A browser asked for Basic credentials sends them with every request of the page: its assets and
// its API calls then carry the key (as the password) without a proxy adding a header.
const BASIC_CHALLENGE = 'Basic realm="gateway queues", charset="UTF-8"';

/**
 * The job data the board shows: who, which models, when and how, but not the request bodies (the
 * tenants' prompts), which every operation's payload holds in `body`.
 */
function withoutBodies(data: JobBatch<JobCommon & { body?: unknown }>) {
  // A job of another shape (written by hand into the queue) is shown as nothing rather than failing the listing.
  return { requests: Array.isArray(data?.requests) ? data.requests.map(({ body: _body, ...request }) => request) : [] };
}

/**
 * Bull Board for the operator tenant's admins (`queues.read`): every queue shard, read-only, with
 * the shard's queue built once by the composition root. Read-only because the gateway keeps its own
 * books on each job (reply channels, idempotency claims, budget reservations): a job retried,
 * promoted or removed from here would run, or vanish, behind their back.
 *
 * Every route the board registers (page, static assets, API) and any other path under the prefix
 * goes through the auth hook and the gateway's error envelope; Bull Board's own error handler
 * would answer errors in another shape. Register with `prefix: QUEUE_BOARD_PREFIX`.
 */
export async function queueBoardPlugin(app: FastifyInstance, options: { queues: ReadonlyArray<Queue<JobBatch>> }): Promise<void> {
  const gatewayErrors = app.errorHandler;
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, permission: 'queues.read', acceptsBasicAuth: true };
    // Bull Board decodes its `activeQueue` query itself; a malformed one is the request's fault, not a 500.
    route.errorHandler = (error, request, reply) =>
      gatewayErrors(error instanceof URIError ? new MalformedRequestError('The query string is not valid percent-encoding.') : error, request, reply);
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 401) reply.header('www-authenticate', BASIC_CHALLENGE);
    return payload;
  });
  const server = new FastifyAdapter().setBasePath(QUEUE_BOARD_PREFIX);
  createBullBoard({
    queues: options.queues.map((queue, shard) => {
      const adapter = new BullMQAdapter(queue, {
        readOnlyMode: true,
        prefix: `shard${shard}:`,
        description: `Queue shard ${shard} of ${options.queues.length} (Redis prefix ${queue.opts.prefix ?? 'bull'})`,
      });
      adapter.setFormatter('data', withoutBodies);
      return adapter;
    }),
    serverAdapter: server,
    options: { uiConfig: { boardTitle: 'Gateway queues' } },
  });
  await app.register(server.registerPlugin());
  app.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/*',
    handler: async (request) => {
      throw new RouteNotFoundError(request.method, request.url.split('?')[0] as string);
    },
  });
}
