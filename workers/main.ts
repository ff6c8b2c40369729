import { configOrExit, onShutdown } from '../src/boot.ts';
import { createLogger } from '../src/log.ts';
import { startWorker } from './start-worker.ts';

// The worker process: config → worker; SIGTERM → finish or hand back running jobs.
const config = configOrExit('worker');
const log = createLogger(config.env.LOG_LEVEL, 'worker');
try {
  const running = await startWorker(config, log);
  onShutdown(async (signal) => {
    log.info({ signal }, 'stopping worker');
    await running.close();
  });
} catch (error) {
  log.fatal({ err: error }, `worker failed to start: ${(error as Error).message}`);
  process.exit(1);
}
