/**
 * A Redis server of the bench's own, on a free loopback port: its CPU and command statistics
 * then belong to the run alone, not to whatever else uses the machine's shared Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { freePort } from '../test/helpers/free-port.ts';

/** A running private Redis. */
export interface PrivateRedis {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;

async function stop(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

async function ping(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined); // connect() reports the failure
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** Where and how to run the server. */
export interface PrivateRedisOptions {
  /** [redis-server] */
  binary?: string;
  /** A taskset CPU list (e.g. `0`): the server runs under `taskset -c <cpus>`, its threads included. */
  cpus?: string;
}

/** Starts `redis-server` as production configures it for the gateway (noeviction), without persistence. */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const binary = options.binary ?? 'redis-server';
  const port = await freePort();
  const serverArgs = [
    binary,
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--maxmemory-policy',
    'noeviction',
    '--loglevel',
    'warning',
  ];
  const [command, ...args] = options.cpus === undefined ? serverArgs : ['taskset', '-c', options.cpus, ...serverArgs];
  const child = spawn(command as string, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  // Set by the 'error' listener, which control-flow analysis does not follow: without the cast it stays `null` to the checker.
  let spawnError = null as Error | null;
  child.once('error', (error) => {
    spawnError = error;
  });
  const url = `redis://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (spawnError) throw spawnError;
      if (child.exitCode !== null) throw new Error(`${binary} exited with ${child.exitCode}`);
      if (await ping(url)) break;
      if (Date.now() > deadline) throw new Error(`${binary} did not answer on ${url} within ${START_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (error) {
    await stop(child);
    throw error;
  }
  return { url, pid: child.pid as number, stop: () => stop(child) };
}
