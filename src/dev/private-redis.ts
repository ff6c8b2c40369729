/**
 * A redis-server of dev's own, for a machine where none runs: loopback only, no persistence,
 * `noeviction` as the gateway requires, and stopped when dev ends.
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

/**
 * Starts `redis-server` from the PATH on a free loopback port, its files in `dir`. Rejects with
 * the spawn error (code ENOENT) when there is no redis-server.
 */
export async function startPrivateRedis(dir: string): Promise<PrivateRedis> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const log = join(dir, 'redis.log');
  const args = [
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
    '--dir',
    dir,
    '--logfile',
    log,
  ];
  // Its own process group: a Ctrl-C in the terminal reaches dev alone, which drains its
  // requests on this Redis before stopping it.
  const child = spawn('redis-server', args, { detached: true, stdio: 'ignore' });
  await once(child, 'spawn');
  // The last word on every way dev ends but SIGKILL: process.exit, the end of the event loop, an uncaught exception.
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
