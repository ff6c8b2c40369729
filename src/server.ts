import { configOrExit, onShutdown } from './boot.ts';
import { createLogger } from './log.ts';
import { startWebTier } from './web.ts';

// The web process: config → web tier → listen; SIGTERM → drain and close.
const config = configOrExit('web');
const log = createLogger(config.env.LOG_LEVEL, 'web');
try {
  const web = await startWebTier(config, log);
  await web.app.listen({ port: config.env.PORT, host: config.env.HOST });
  onShutdown(async (signal) => {
    log.info({ signal }, 'stopping web');
    await web.close();
  });
} catch (error) {
  log.fatal({ err: error }, `web failed to start: ${(error as Error).message}`);
  process.exit(1);
}
