/**
 * Serves one PGlite to many PostgreSQL clients over TCP, taking turns a request at a time.
 *
 * PGlite is a single session, and a request of the extended protocol (Parse, Bind, Describe,
 * Execute … Sync) builds an unnamed statement and portal that belong to that session: another
 * client's message run in between replaces them ("portal "" does not exist"). So a request, every
 * message up to a Sync or a simple Query, runs whole; and a client that leaves a transaction open
 * keeps the turn until it ends it, or disconnects, which rolls it back. pglite-socket's server
 * queues single messages instead, which fails under concurrent pg pools (electric-sql/pglite#1046);
 * hence this one.
 */
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

// Protocol codes of the untyped messages a client may open with (PostgreSQL protocol, "Message Formats").
const SSL_REQUEST = 80_877_103;
const GSSENC_REQUEST = 80_877_104;
const CANCEL_REQUEST = 80_877_102;
const ROLLBACK = queryMessage('ROLLBACK');

/** A PGlite being served. */
export interface PgliteWireServer {
  port: number;
  /** Stops accepting, drops the clients and waits for the request under way; the database stays open. */
  close(): Promise<void>;
}

interface Client {
  socket: Socket;
  buffer: Buffer;
  started: boolean;
  pending: Buffer[];
}

interface Turn {
  client: Client;
  request: Uint8Array;
  answer: boolean;
}

function queryMessage(sql: string): Buffer {
  const text = Buffer.from(`${sql}\0`);
  const header = Buffer.alloc(5);
  header.write('Q');
  header.writeInt32BE(4 + text.length, 1);
  return Buffer.concat([header, text]);
}

/** Serves `db` on `host` at a free port. */
export async function servePglite(db: PGlite, host: string): Promise<PgliteWireServer> {
  const turns: Turn[] = [];
  const clients = new Set<Client>();
  // The client whose transaction is open: only its turns run until it ends it.
  let holder: Client | null = null;
  let draining = false;
  let running: Promise<void> = Promise.resolve();

  const next = (): Turn | undefined => {
    if (holder && !clients.has(holder)) return { client: holder, request: ROLLBACK, answer: false };
    const index = holder ? turns.findIndex((turn) => turn.client === holder) : 0;
    return index < 0 ? undefined : turns.splice(index, 1)[0];
  };
  const drain = async () => {
    draining = true;
    try {
      for (let turn = next(); turn; turn = next()) {
        const { client, request, answer } = turn;
        try {
          const reply = await db.runExclusive(() => db.execProtocolRaw(request));
          if (answer && !client.socket.destroyed) client.socket.write(reply);
          holder = db.isInTransaction() ? client : null;
        } catch {
          // PGlite itself failed (it answers a bad request with an ErrorResponse); nothing is held any more.
          client.socket.destroy();
          holder = null;
        }
      }
    } finally {
      draining = false;
    }
  };
  const wake = () => {
    if (!draining) running = drain();
  };

  const server = createServer((socket) => {
    const client: Client = { socket, buffer: Buffer.alloc(0), started: false, pending: [] };
    clients.add(client);
    socket.setNoDelay(true);
    socket.on('data', (chunk) => {
      for (const request of read(client, chunk)) turns.push({ client, request, answer: true });
      wake();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      clients.delete(client);
      for (let i = turns.length - 1; i >= 0; i--) if (turns[i]?.client === client) turns.splice(i, 1);
      wake(); // a transaction it left open is rolled back
    });
  });
  server.listen(0, host);
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const client of clients) client.socket.destroy();
      await closed;
      await running;
    },
  };
}

/** The requests completed by `chunk`: what a client sent, cut into messages and grouped up to each Sync or Query. */
function read(client: Client, chunk: Buffer): Buffer[] {
  const requests: Buffer[] = [];
  client.buffer = Buffer.concat([client.buffer, chunk]);
  for (;;) {
    const { buffer, socket } = client;
    // Before startup a message is its length and a code; after it, a type byte and its length.
    const header = client.started ? 5 : 8;
    if (buffer.length < header) return requests;
    const length = client.started ? 1 + buffer.readInt32BE(1) : buffer.readInt32BE(0);
    if (length < header) {
      socket.destroy();
      return [];
    }
    if (buffer.length < length) return requests;
    const message = buffer.subarray(0, length);
    client.buffer = buffer.subarray(length);
    if (!client.started) {
      const code = message.readInt32BE(4);
      // No TLS here (N: the client goes on in plain text), and no second backend to cancel.
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) socket.write('N');
      else if (code === CANCEL_REQUEST) {
        socket.destroy();
        return [];
      } else {
        client.started = true;
        requests.push(message);
      }
      continue;
    }
    const type = String.fromCharCode(message[0] as number);
    if (type === 'X') {
      socket.end();
      return requests;
    }
    client.pending.push(message);
    if (type === 'S' || type === 'Q') {
      requests.push(Buffer.concat(client.pending));
      client.pending = [];
    }
  }
}
