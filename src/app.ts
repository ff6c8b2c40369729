import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { CatalogFile } from './catalog/schema.ts';
import type { ApiKeyAuthenticator } from './auth/api-key-authenticator.ts';
import type { CompletionDispatcher } from './chat/dispatcher.ts';
import { ServiceUnavailableError } from './errors/gateway-error.ts';
import { newRequestId } from './request-id.ts';
import { errorsPlugin } from './plugins/errors.ts';
import { authPlugin } from './plugins/auth.ts';
import { chatCompletionsRoutes } from './routes/v1/chat-completions.ts';
import { healthRoutes } from './routes/health.ts';

/** Everything the web app uses, built by the composition root (src/web.ts) or a test. */
export interface AppDeps {
  config: Config;
  log: Logger;
  catalog: CatalogFile;
  authenticator: ApiKeyAuthenticator;
  dispatcher: CompletionDispatcher;
  replyChannel: string;
  /** Throws when a dependency is down (for /readyz). */
  ready: () => Promise<void>;
  /** True once SIGTERM arrived: new requests are refused with 503. */
  draining: () => boolean;
}

/** The web app as one root plugin tree: errors, auth, routes. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { env } = deps.config;
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // Two log lines per request cost more than the rest of the web tier's work; the worker logs each completion.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: env.BODY_LIMIT_BYTES,
    // Fastify ships requestTimeout at 0, so a slowloris client could take forever to send
    // its request. The idle socket timeout stays 0: a non-streamed completion may be
    // silent for minutes; REQUEST_TIMEOUT_MS bounds the answer instead.
    requestTimeout: 60_000,
    connectionTimeout: 0,
    keepAliveTimeout: 72_000,
    return503OnClosing: false,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (deps.draining()) {
      reply.header('connection', 'close');
      throw new ServiceUnavailableError('The gateway is restarting; retry shortly.', 1);
    }
  });
  await app.register(errorsPlugin, { bodyLimit: env.BODY_LIMIT_BYTES });
  await app.register(authPlugin, { authenticator: deps.authenticator });
  await app.register(healthRoutes, { ready: deps.ready });
  await app.register(chatCompletionsRoutes, {
    catalog: deps.catalog,
    dispatcher: deps.dispatcher,
    replyChannel: deps.replyChannel,
    bodyLimit: env.BODY_LIMIT_BYTES,
    sse: { keepAliveMs: env.SSE_KEEPALIVE_MS, maxBufferedBytes: 1024 * 1024 },
  });
  return app;
}
