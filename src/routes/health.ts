import type { FastifyInstance } from 'fastify';
import { ServiceUnavailableError } from '../errors/gateway-error.ts';

/** /healthz: the process is up. /readyz: its dependencies answer and it is not draining (503 otherwise). */
export async function healthRoutes(app: FastifyInstance, options: { ready: () => Promise<void> }): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => {
    try {
      await options.ready();
    } catch (error) {
      throw new ServiceUnavailableError(`Not ready: ${(error as Error).message}`);
    }
    return { status: 'ready' };
  });
}
