/**
 * PostgreSQL's connection lost under a client the gateway holds: the statement fails with an error read as the
 * store being away (a 503), and the process lives on. pg-pool listens for a client's 'error' only while the
 * client is idle; a transaction's client is checked out, and its 'error' event would otherwise end the process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { inTransaction } from '../../../src/infra/store/postgres/transaction.ts';
import { isStoreUnavailable } from '../../../src/infra/store/store-unavailable.ts';
import { unavailableError } from '../../../src/infra/unavailable.ts';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.ts';

let proxy: TcpProxy;
let pool: pg.Pool;
const uncaught: unknown[] = [];
const record = (error: unknown) => uncaught.push(error);

beforeAll(async () => {
  proxy = await startTcpProxy(5432);
  pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`, max: 2, connectionTimeoutMillis: 2_000 });
  pool.on('error', () => undefined);
  process.on('uncaughtException', record);
});

afterAll(async () => {
  process.off('uncaughtException', record);
  await pool?.end();
  await proxy?.close();
});

describe('a connection lost under a transaction', () => {
  it('fails the statement as the store being away, and emits nothing the process dies of', async () => {
    const running = inTransaction(pool, (client) => client.query('SELECT pg_sleep(5)'));
    const failed = running.then(
      () => null,
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await proxy.cut();
    const error = await failed;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('Connection terminated unexpectedly');
    expect(isStoreUnavailable(error)).toBe(true);
    expect(unavailableError(error)?.message).toBe('The gateway cannot reach its database right now; retry shortly.');
    // An 'error' without a listener is thrown on a later turn of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(uncaught).toEqual([]);
    await proxy.restore();
    expect((await inTransaction(pool, (client) => client.query<{ one: number }>('SELECT 1 AS one'))).rows).toEqual([{ one: 1 }]);
  });

  it('reads a refused connection as unavailable, and a statement the server refused as no outage', async () => {
    await proxy.cut();
    const refused = await pool.query('SELECT 1').catch((error: unknown) => error);
    expect(unavailableError(refused)?.status).toBe(503);
    await proxy.restore();
    const syntax = await pool.query('SELEKT 1').catch((error: unknown) => error);
    expect((syntax as { code?: string }).code).toBe('42601');
    expect(isStoreUnavailable(syntax)).toBe(false);
    expect(unavailableError(syntax)).toBeNull();
  });
});
