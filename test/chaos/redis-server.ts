/**
 * The campaign's private redis-server: loopback, a free port, append-only file in a temp dir of its
 * own, noeviction (the gateway refuses anything else). It can be restarted with its data (a graceful
 * SHUTDOWN writes the append-only file out) or come back empty (killed, its files deleted).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../helpers/free-port.ts';

/** A running private Redis. */
export interface PrivateRedis {
  port: number;
  url: string;
  /** Graceful SHUTDOWN (the append-only file is written out), `downMs` down, then started again on the same port and dir. */
  restartWithData(downMs: number): Promise<void>;
  /** SIGKILL, its files deleted, `downMs` down, then started again empty. */
  restartEmpty(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** The arguments of one node; `extra` adds cluster settings. */
export function redisArgs(port: number, dir: string, extra: string[] = []): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--save',
    '',
    '--maxmemory-policy',
    'noeviction',
    '--logfile',
    join(dir, 'redis.log'),
    ...extra,
  ];
}

/** Starts redis-server with `args` and resolves once it answers PING (within 10 s). */
export async function startRedisProcess(port: number, args: string[]): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  let failure: Error | null = null;
  child.once('error', (error) => (failure = error));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (failure) throw new Error(`redis-server could not start: ${(failure as Error).message}`);
    if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${child.exitCode}`);
    // A server still loading its append-only file answers LOADING, which ping rejects.
    if ((await ping(port)) === 'PONG') return child;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server on port ${port} did not answer within 10 s`);
}

/** One PING on a connection of its own; null when refused or not ready. */
export async function ping(port: number): Promise<string | null> {
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return await probe.ping();
  } catch {
    return null;
  } finally {
    probe.disconnect();
  }
}

/** Ends a redis-server child: `SIGTERM` is Redis's graceful shutdown (the AOF is fsynced), `SIGKILL` loses what was not written. */
export async function endRedisProcess(child: ChildProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}

/** Deletes what a node keeps in its dir (append-only files, dumps), leaving its log. */
export async function emptyDir(dir: string): Promise<void> {
  for (const name of await readdir(dir)) if (name !== 'redis.log') await rm(join(dir, name), { recursive: true, force: true });
}

/** Starts the private Redis. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'chaos-redis-'));
  let child = await startRedisProcess(port, redisArgs(port, dir));
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async restartWithData(downMs) {
      await endRedisProcess(child, 'SIGTERM');
      await sleep(downMs);
      child = await startRedisProcess(port, redisArgs(port, dir));
    },
    async restartEmpty(downMs) {
      await endRedisProcess(child, 'SIGKILL');
      await emptyDir(dir);
      await sleep(downMs);
      child = await startRedisProcess(port, redisArgs(port, dir));
    },
    async stop() {
      await endRedisProcess(child, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
