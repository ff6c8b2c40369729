import type { Logger } from 'pino';
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

/** What a stop may take past its grace period: bounded waits on what no longer answers, the last spans. */
export const SHUTDOWN_MARGIN_MS = 5_000;

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits. A stop still running `deadlineMs` after the
 * signal is cut short (exit 1): an orchestrator waits for the process, and a hung library call
 * must not hold it there for ever.
 */
export function onShutdown(stop: (signal: string) => Promise<void>, deadlineMs: number, log: Pick<Logger, 'error'>): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      log.error({ deadlineMs }, 'stop did not finish in time; exiting');
      process.exit(1);
    }, deadlineMs).unref();
    stop(signal).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => handle('SIGTERM'));
  process.once('SIGINT', () => handle('SIGINT'));
}
