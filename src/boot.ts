import { loadConfig, ConfigError, type Config } from './config.ts';

/**
 * Loads the configuration for a process entry point; on a bad or missing variable prints
 * the one line that names it and exits, as twelve-factor processes should.
 */
export function configOrExit(processName: string, defaults: Record<string, string> = {}): Config {
  try {
    return loadConfig(process.env, defaults);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${processName}: ${error.message}\n`);
    process.exit(1);
  }
}

/** Runs `stop` once on SIGTERM or SIGINT, then exits. */
export function onShutdown(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => handle('SIGTERM'));
  process.once('SIGINT', () => handle('SIGINT'));
}
