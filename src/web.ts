import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import type { Config } from './config.ts';
import { buildApp } from './app.ts';
import { loadCatalogFile } from './catalog/load-catalog.ts';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator.ts';
import { CompletionDispatcher } from './chat/dispatcher.ts';
import { createStore } from './store/create-store.ts';
import type { Repository } from './store/repository.ts';
import { createRedisKeys, COMPLETION_QUEUE } from './redis/keys.ts';
import { assertNoEviction, boundedWait, closeRedis, connectRedis } from './redis/connections.ts';
import { ReplyChannel } from './redis/reply-channel.ts';
import type { CompletionJob } from './queue/completion-job.ts';
import { Outbox } from './outbox/outbox.ts';
import type { AuditSink } from './audit/audit-event.ts';
import { PromptCache, cacheKey } from './prompts/prompt-cache.ts';
import type { PromptAdminDeps } from './prompts/prompt-admin.ts';
import { listenForInvalidations } from './redis/invalidations.ts';

// Activations reach every web process at once through Redis; this bounds how long a lost
// invalidation message can leave a process on the previous version.
const PROMPT_CACHE_TTL_MS = 5_000;

/** A built web tier: the app, and a stop that drains open responses first. */
export interface WebTier {
  app: FastifyInstance;
  repository: Repository;
  /** Stops accepting, lets open responses finish for up to the grace period, then closes everything. */
  close(): Promise<void>;
}

/** The web process's composition root: connections, store, catalog and app, built once. */
export async function startWebTier(config: Config, log: Logger): Promise<WebTier> {
  const { env } = config;
  const catalog = await loadCatalogFile(env.CATALOG);
  const keys = createRedisKeys(env.REDIS_PREFIX);
  const onRedisError = (error: Error) => log.warn({ err: error }, 'redis connection error');
  const commands = await connectRedis(env.REDIS_URL, 'commands', 'gw-web-commands', onRedisError);
  await assertNoEviction(commands);
  const subscriber = await connectRedis(env.REDIS_URL, 'subscriber', 'gw-web-replies', onRedisError);
  const repository = await createStore(config.store);
  const instanceId = ulid().toLowerCase();
  const replies = new ReplyChannel({ subscriber, commands, keys, instanceId, silenceMs: 2_000, log });
  await replies.start();
  const queue = new Queue<CompletionJob>(COMPLETION_QUEUE, { connection: commands, prefix: keys.queuePrefix });
  queue.on('error', onRedisError);
  const dispatcher = new CompletionDispatcher({
    queue,
    replies,
    commands,
    keys,
    deadlines: { queueDeadlineMs: env.QUEUE_DEADLINE_MS, requestTimeoutMs: env.REQUEST_TIMEOUT_MS },
    log,
  });
  const outbox = new Outbox(commands, keys);
  const audit: AuditSink = (event) => outbox.push({ kind: 'audit', event });
  const prompts = new PromptCache(repository.prompts, PROMPT_CACHE_TTL_MS);
  await listenForInvalidations(subscriber, keys.promptInvalidations, (message) => prompts.invalidate(message));
  const promptAdmin: PromptAdminDeps = {
    repository,
    catalog,
    audit,
    invalidate: async (tenantId, name) => {
      await commands.publish(keys.promptInvalidations, cacheKey(tenantId, name));
    },
  };
  let draining = false;
  const app = await buildApp({
    config,
    log,
    catalog,
    authenticator: new ApiKeyAuthenticator(repository, env.KEY_CACHE_TTL_MS),
    dispatcher,
    repository,
    prompts,
    promptAdmin,
    audit,
    replyChannel: replies.channel,
    ready: async () => {
      await Promise.all([commands.ping(), repository.ping()]);
    },
    draining: () => draining,
  });

  return {
    app,
    repository,
    async close() {
      draining = true;
      const timer = setTimeout(() => {
        log.warn({ open: replies.size }, 'grace period over; closing open connections');
        app.server.closeAllConnections();
      }, env.SHUTDOWN_GRACE_MS);
      // Connections whose response ends during the drain turn idle afterwards; close them as they do.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
      await app.close();
      clearInterval(sweep);
      clearTimeout(timer);
      await boundedWait(replies.stop());
      await boundedWait(queue.close());
      await repository.close();
      await closeRedis([commands, subscriber]);
    },
  };
}
