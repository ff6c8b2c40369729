/**
 * A process's operations listener, on its own port and never on the public one: `/metrics`
 * (Prometheus), `/healthz` (the process is up) and `/readyz` (its dependencies, each with its
 * state, and whether it is stopping). The worker has no other HTTP server, so this is how an
 * orchestrator, a Prometheus or a test asks it.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ResourceNotFoundError, ServiceUnavailableError, type GatewayError } from '../../errors/gateway-error.ts';
import { toEnvelope } from '../../errors/to-envelope.ts';
import { newRequestId } from '../http/request-id.ts';
import type { Registry } from 'prom-client';
import { checkReadiness, type Dependency } from './readiness.ts';

/** What the listener asks of its process. */
export interface OpsChecks {
  dependencies: readonly Dependency[];
  /** True once the process is stopping. */
  stopping(): boolean;
  /** The process's metrics; null when it keeps none. */
  metrics: Registry | null;
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
    const { metrics } = checks;
    if (req.method !== 'GET' || (path !== '/healthz' && path !== '/readyz' && (path !== '/metrics' || !metrics)))
      return sendError(res, new ResourceNotFoundError(`${req.method} ${path}`), requestId);
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' }, requestId);
    if (path === '/metrics' && metrics) {
      metrics.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metrics.contentType, 'x-request-id': requestId }).end(text),
        (error: unknown) => sendError(res, new ServiceUnavailableError(`Metrics could not be read: ${(error as Error).message}`), requestId),
      );
      return;
    }
    if (checks.stopping()) return sendError(res, new ServiceUnavailableError('Not ready: the process is stopping.'), requestId);
    checkReadiness(checks.dependencies, { details: true }).then(
      (report) => sendJson(res, 200, report, requestId),
      (error: unknown) => sendError(res, error as GatewayError, requestId),
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
