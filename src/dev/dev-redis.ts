/** Which Redis `npm run dev` uses: the configured one when it listens, else a private redis-server. */
import type { RedisTarget } from '../infra/redis/connections.ts';
import { DevSetupError } from './dev-setup-error.ts';
import { listening } from './listening.ts';
import { startPrivateRedis } from './private-redis.ts';
import { withoutPassword } from './without-password.ts';

/** The Redis dev runs on, a line that says which, and what gives it back. */
export interface DevRedis {
  target: RedisTarget;
  description: string;
  stop(): Promise<void>;
}

/**
 * The configured Redis when it listens (a cluster is taken as it is), else a private
 * redis-server with its files under `dir`; a DevSetupError when there is neither.
 */
export async function devRedis(configured: RedisTarget, dir: string): Promise<DevRedis> {
  const none = async () => undefined;
  if (configured.kind === 'cluster') return { target: configured, description: 'the Redis Cluster of REDIS_CLUSTER_NODES', stop: none };
  const shown = withoutPassword(configured.url);
  const { hostname, port } = new URL(configured.url);
  if (await listening(hostname, Number(port || 6379))) return { target: configured, description: shown, stop: none };
  try {
    const server = await startPrivateRedis({ dir });
    return {
      target: { kind: 'single', url: server.url },
      description: `private redis-server (pid ${server.pid}) on ${server.url}, as nothing listens at ${shown}; it stops with dev`,
      stop: server.stop,
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new DevSetupError(
      `no Redis listens at ${shown}, and redis-server is not on the PATH to start a private one.`,
      'Install Redis 7 or newer (Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis), or set REDIS_URL to a running Redis.',
    );
  }
}
