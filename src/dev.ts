import { constants } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configOrExit, onShutdown, SHUTDOWN_MARGIN_MS } from './boot.ts';
import type { Config } from './config.ts';
import { createLogger } from './log.ts';
import { runRelease } from './release.ts';
import { startWebTier } from './web/web-tier.ts';
import { startWorker } from './worker/start-worker.ts';
import { startTracing, tracingConfigured } from './infra/tracing/tracing.ts';
import { DevSetupError } from './dev/dev-setup-error.ts';
import { devRedis } from './dev/dev-redis.ts';
import { DEV_DATABASE_URL, devStore } from './dev/dev-store.ts';
import { DEV_TENANT, issueDevKeys } from './dev/dev-keys.ts';

// Development mode: web and worker in one process, the simulator catalog, a fresh development
// key printed at start; the local Redis and PostgreSQL, or dev's own where none listens.
const DEV_DEFAULTS = {
  REDIS_URL: 'redis://127.0.0.1:6379',
  DATABASE_URL: DEV_DATABASE_URL,
  CATALOG: fileURLToPath(new URL('../catalog/dev.yaml', import.meta.url)),
  PORT: '8080',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
};

// dev's own Redis files and PostgreSQL data, in the directory it is run from (git-ignored in the checkout).
const STATE_DIR = resolve('.gateway-dev');

function banner(address: string, keys: { developer: string; admin: string }): string {
  return [
    `Gateway (web + worker, simulator catalog) listening on ${address}`,
    `Development key (tenant '${DEV_TENANT}', role developer): ${keys.developer}`,
    `Admin key for the internal API (tenant '${DEV_TENANT}', role admin): ${keys.admin}`,
    '',
    `curl -s ${address}/v1/chat/completions -H "Authorization: Bearer ${keys.developer}" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d '{"model":"svc-flash","messages":[{"role":"user","content":"Hello!"}]}'`,
    '',
  ].join('\n');
}

const config = configOrExit('dev', DEV_DEFAULTS);
const log = createLogger(config.env.LOG_LEVEL, 'dev', { traceIds: tracingConfigured(config.env) });
// A signal's default action ends dev without its exit hooks, which stop the private Redis. Until
// the gateway runs (and can drain) a signal ends dev at once, and a closed terminal's always does.
const exitOnSignal = (signal: NodeJS.Signals) => process.exit(128 + constants.signals[signal]);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, exitOnSignal);
try {
  const redis = await devRedis(config.redis, join(STATE_DIR, 'redis'));
  process.stdout.write(`Redis: ${redis.description}\n`);
  const store = await devStore(config.store, process.env.PGPORT, join(STATE_DIR, 'pgdata'));
  process.stdout.write(`Store: ${store.description}\n`);
  const devConfig: Config = { ...config, redis: redis.target, store: store.store };
  await runRelease(devConfig, log);
  const tracing = await startTracing(config.env, 'llm-gateway-dev', log);
  const worker = await startWorker(devConfig, log, tracing);
  const web = await startWebTier(devConfig, log, tracing);
  const address = await web.app.listen({ port: config.env.PORT, host: config.env.HOST });
  process.stdout.write(banner(address, await issueDevKeys(web.repository)));
  process.off('SIGINT', exitOnSignal).off('SIGTERM', exitOnSignal);
  // Web drains, then the worker: each may use its whole grace period. Store and Redis go last.
  onShutdown(
    async () => {
      await web.close();
      await worker.close();
      await tracing.shutdown();
      await store.stop();
      await redis.stop();
    },
    2 * config.env.SHUTDOWN_GRACE_MS + SHUTDOWN_MARGIN_MS,
    log,
  );
} catch (error) {
  if (error instanceof DevSetupError) {
    process.stderr.write(error.lines.map((line) => `dev: ${line}\n`).join(''));
    process.exit(1);
  }
  log.fatal({ err: error }, `dev failed to start: ${(error as Error).message}`);
  process.stderr.write(`dev: ${(error as Error).message}\n`);
  process.exit(1);
}
