import type { FastifyInstance } from 'fastify';

/** /healthz: the process is up. /readyz: its dependencies answer and it is not draining. */
export async function healthRoutes(app: FastifyInstance, options: { ready: () => Promise<void> }): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => {
    await options.ready();
    return { status: 'ready' };
  });
}
