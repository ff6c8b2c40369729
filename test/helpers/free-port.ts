/** A loopback port nobody listens on right now (for servers a test or benchmark starts). */
import { once } from 'node:events';
import { createServer } from 'node:net';

/** Asks the kernel for a free port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}
