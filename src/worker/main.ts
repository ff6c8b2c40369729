import { configOrExit, onShutdown, SHUTDOWN_MARGIN_MS } from '../boot.ts';
import { createLogger } from '../log.ts';
import { startTracing, tracingConfigured } from '../infra/tracing/tracing.ts';
import { startWorker } from './start-worker.ts';

// The worker process: config → tracing → worker; SIGTERM → finish or hand back running jobs, then export the last spans.
const config = configOrExit('worker');
const log = createLogger(config.env.LOG_LEVEL, 'worker', { traceIds: tracingConfigured(config.env) });
try {
  const tracing = await startTracing(config.env, 'llm-gateway-worker', log);
  const running = await startWorker(config, log, tracing);
  onShutdown(
    async (signal) => {
      log.info({ signal }, 'stopping worker');
      await running.close();
      await tracing.shutdown();
    },
    config.env.SHUTDOWN_GRACE_MS + SHUTDOWN_MARGIN_MS,
    log,
  );
} catch (error) {
  log.fatal({ err: error }, `worker failed to start: ${(error as Error).message}`);
  process.exit(1);
}
