/**
 * A process's operations listener, on its own port and never on the public one: `/healthz` (the
 * process is up) and `/readyz` (its dependencies answer and it is not stopping). The worker has no
 * other HTTP server, so this is how an orchestrator or a test asks it.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ResourceNotFoundError, ServiceUnavailableError, type GatewayError } from '../errors/gateway-error.ts';
import { toEnvelope } from '../errors/to-envelope.ts';
import { newRequestId } from '../request-id.ts';

/** What the listener asks of its process. */
export interface OpsChecks {
  /** Throws when a dependency is down. */
  ready(): Promise<void>;
  /** True once the process is stopping. */
  stopping(): boolean;
}

/** A running listener. */
export interface OpsListener {
  port: number;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown, requestId: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId }).end(JSON.stringify(body));
}

function sendError(res: ServerResponse, error: GatewayError, requestId: string): void {
  sendJson(res, error.status, toEnvelope(error, requestId), requestId);
}

/** Listens on `host`:`port` (0: any free port). */
export async function startOpsListener(host: string, port: number, checks: OpsChecks): Promise<OpsListener> {
  const server: Server = createServer((req, res) => {
    const requestId = newRequestId();
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || (path !== '/healthz' && path !== '/readyz')) return sendError(res, new ResourceNotFoundError(`${req.method} ${path}`), requestId);
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' }, requestId);
    if (checks.stopping()) return sendError(res, new ServiceUnavailableError('Not ready: the process is stopping.'), requestId);
    checks.ready().then(
      () => sendJson(res, 200, { status: 'ready' }, requestId),
      (error: unknown) => sendError(res, new ServiceUnavailableError(`Not ready: ${(error as Error).message}`), requestId),
    );
  });
  // An orchestrator's probe is quick; a client that trickles is cut off.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
