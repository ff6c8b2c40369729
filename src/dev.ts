import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { configOrExit, onShutdown, SHUTDOWN_MARGIN_MS } from './boot.ts';
import { createLogger } from './log.ts';
import { runRelease } from './release.ts';
import { startWebTier } from './web/web-tier.ts';
import { startWorker } from './worker/start-worker.ts';
import { startTracing, tracingConfigured } from './infra/tracing/tracing.ts';
import { generateApiKey } from './domain/access/api-key-secret.ts';
import { TenantExistsError, type Repository, type Role } from './infra/store/repository.ts';

// Development mode: web and worker in one process, the simulator catalog, local
// Redis and PostgreSQL, and a fresh development key printed at start.
const DEV_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/gateway_dev';
const DEV_TENANT = 'dev';

const DEV_DEFAULTS = {
  REDIS_URL: 'redis://127.0.0.1:6379',
  DATABASE_URL: DEV_DATABASE_URL,
  CATALOG: fileURLToPath(new URL('../catalog/dev.yaml', import.meta.url)),
  PORT: '8080',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
};

async function ensureDevDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  target.pathname = '/postgres';
  const client = new pg.Client({ connectionString: target.toString() });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name.replaceAll('"', '')}"`);
  } finally {
    await client.end();
  }
}

async function issueDevKey(repository: Repository, role: Role): Promise<string> {
  const key = generateApiKey();
  await repository.apiKeys.create({ id: key.id, tenantId: DEV_TENANT, role, secretHash: key.secretHash });
  return key.secret;
}

const config = configOrExit('dev', DEV_DEFAULTS);
const log = createLogger(config.env.LOG_LEVEL, 'dev', { traceIds: tracingConfigured(config.env) });
try {
  if (config.store.kind === 'postgres' && config.store.databaseUrl === DEV_DATABASE_URL) await ensureDevDatabase(DEV_DATABASE_URL);
  await runRelease(config, log);
  const tracing = await startTracing(config.env, 'llm-gateway-dev', log);
  const worker = await startWorker(config, log, tracing);
  const web = await startWebTier(config, log, tracing);
  const address = await web.app.listen({ port: config.env.PORT, host: config.env.HOST });
  await web.repository.tenants.create({ id: DEV_TENANT, name: 'Development' }).catch((error: unknown) => {
    if (!(error instanceof TenantExistsError)) throw error;
  });
  const secret = await issueDevKey(web.repository, 'developer');
  const adminSecret = await issueDevKey(web.repository, 'admin');
  process.stdout.write(
    [
      `Gateway (web + worker, simulator catalog) listening on ${address}`,
      `Development key (tenant '${DEV_TENANT}', role developer): ${secret}`,
      `Admin key for the internal API (tenant '${DEV_TENANT}', role admin): ${adminSecret}`,
      '',
      `curl -s ${address}/v1/chat/completions -H "Authorization: Bearer ${secret}" \\`,
      `  -H 'Content-Type: application/json' \\`,
      `  -d '{"model":"svc-flash","messages":[{"role":"user","content":"Hello!"}]}'`,
      '',
    ].join('\n'),
  );
  // Web drains, then the worker: each may use its whole grace period.
  onShutdown(async () => {
    await web.close();
    await worker.close();
    await tracing.shutdown();
  }, 2 * config.env.SHUTDOWN_GRACE_MS + SHUTDOWN_MARGIN_MS, log);
} catch (error) {
  log.fatal({ err: error }, `dev failed to start: ${(error as Error).message}`);
  process.stderr.write(`dev: ${(error as Error).message}\n`);
  process.exit(1);
}
