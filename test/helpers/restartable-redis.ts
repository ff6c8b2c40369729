/** A redis-server on a fixed loopback port that a test kills and starts again, empty (no persistence). */
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';

/** Starts redis-server on `port` without persistence; resolves once it answers. */
export async function startRedisServer(port: number): Promise<ChildProcess> {
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const probe = new Redis(port, '127.0.0.1', { retryStrategy: () => 50 });
  probe.on('error', () => undefined);
  await probe.ping();
  await probe.quit();
  return server;
}
