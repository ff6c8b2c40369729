/**
 * A loopback TCP proxy that a test can cut and restore, to make a real server (PostgreSQL)
 * unreachable for one process without stopping it for everything else.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

/** A running proxy. */
export interface TcpProxy {
  port: number;
  /** Drops every connection and refuses new ones (ECONNREFUSED). */
  cut(): Promise<void>;
  /**
   * Drops every connection and closes each new one as soon as it is accepted, as a server that goes away
   * mid-handshake: a client reads its connection ending ("Connection terminated unexpectedly" for pg), not a refusal.
   */
  hangUp(): Promise<void>;
  /** Accepts connections again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Proxies 127.0.0.1:<port> to 127.0.0.1:<targetPort>. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server;
  let hangingUp = false;
  const listen = async (port: number) => {
    server = createServer((client) => {
      if (hangingUp) {
        // Tracked, so that the next stop destroys what the client has not closed itself.
        sockets.add(client);
        client.on('close', () => sockets.delete(client));
        client.on('error', () => client.destroy());
        client.end();
        return;
      }
      const upstream = connect(targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  };
  const port = await listen(0);
  const stop = async () => {
    for (const socket of sockets) socket.destroy();
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    port,
    cut: stop,
    hangUp: async () => {
      await stop();
      hangingUp = true;
      await listen(port);
    },
    restore: async () => {
      if (hangingUp) await stop();
      hangingUp = false;
      await listen(port);
    },
    close: stop,
  };
}
