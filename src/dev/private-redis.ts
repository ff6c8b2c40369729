/**
 * A redis-server of one process's own: dev's, on a machine where none runs, and a bench's, whose
 * CPU and command statistics then belong to its run alone. Loopback only, no persistence,
 * `noeviction` as the gateway requires, and stopped when its process ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A running private Redis. */
export interface PrivateRedis {
  url: string;
  pid: number;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

async function pings(url: string): Promise<boolean> {
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

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

async function waitUntilAnswering(child: ChildProcess, url: string, log: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await pings(url))) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode} before answering; see ${log}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not answer on ${url} within ${START_TIMEOUT_MS} ms; see ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Where and how to run the server. */
export interface PrivateRedisOptions {
  /** Its directory, for its files and its log; absent: the log goes to this process's stderr. */
  dir?: string;
  /** A taskset CPU list (e.g. `0`): the server runs under `taskset -c <cpus>`, its threads included. */
  cpus?: string;
}

/**
 * Starts `redis-server` from the PATH on a free loopback port. Rejects with the spawn error (code
 * ENOENT) when there is no redis-server.
 */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const { dir, cpus } = options;
  if (dir !== undefined) await mkdir(dir, { recursive: true });
  const port = await freePort();
  const log = dir === undefined ? 'its output' : join(dir, 'redis.log');
  const files = dir === undefined ? ['--loglevel', 'warning'] : ['--dir', dir, '--logfile', log];
  const serverArgs = [
    'redis-server',
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
    ...files,
  ];
  const [command, ...args] = (cpus === undefined ? serverArgs : ['taskset', '-c', cpus, ...serverArgs]) as [string, ...string[]];
  // Its own process group: a Ctrl-C in the terminal reaches its owner alone, which drains its
  // requests on this Redis before stopping it.
  const child = spawn(command, args, { detached: true, stdio: ['ignore', 'ignore', dir === undefined ? 'inherit' : 'ignore'] });
  await once(child, 'spawn');
  // The last word on every way its owner ends but SIGKILL: process.exit, the end of the event loop, an uncaught exception.
  const killOnExit = () => child.kill('SIGTERM');
  process.on('exit', killOnExit);
  const url = `redis://127.0.0.1:${port}`;
  const stopServer = () => {
    process.off('exit', killOnExit);
    return stop(child);
  };
  try {
    await waitUntilAnswering(child, url, log);
  } catch (error) {
    await stopServer();
    throw error;
  }
  return { url, pid: child.pid as number, stop: stopServer };
}
