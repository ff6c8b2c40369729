import { configOrExit, onShutdown, SHUTDOWN_MARGIN_MS } from '../boot.ts';
import { createLogger } from '../log.ts';
import { startWebTier } from './web-tier.ts';
import { startTracing, tracingConfigured } from '../infra/tracing/tracing.ts';

// The web process: config → tracing → web tier → listen; SIGTERM → drain and close, then export the last spans.
const config = configOrExit('web');
const log = createLogger(config.env.LOG_LEVEL, 'web', { traceIds: tracingConfigured(config.env) });
try {
  const tracing = await startTracing(config.env, 'llm-gateway-web', log);
  const web = await startWebTier(config, log, tracing);
  await web.app.listen({ port: config.env.PORT, host: config.env.HOST });
  onShutdown(
    async (signal) => {
      log.info({ signal }, 'stopping web');
      await web.close();
      await tracing.shutdown();
    },
    config.env.SHUTDOWN_GRACE_MS + SHUTDOWN_MARGIN_MS,
    log,
  );
} catch (error) {
  log.fatal({ err: error }, `web failed to start: ${(error as Error).message}`);
  process.exit(1);
}
