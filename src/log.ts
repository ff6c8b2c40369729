import { pino, type Logger } from 'pino';

/** The process logger: JSON lines on stdout, one field set per process kind. */
export function createLogger(level: string, process: 'web' | 'worker' | 'dev' | 'release'): Logger {
  return pino({ level, base: { process }, timestamp: pino.stdTimeFunctions.isoTime });
}
