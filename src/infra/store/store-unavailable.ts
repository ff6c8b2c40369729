/**
 * Whether an error says, in the store's own terms, that the store cannot be reached right now (PostgreSQL
 * cut, restarting or out of connections; MongoDB with no server to select): like Redis away, a 503 to retry,
 * never a 500. pg reports a lost connection by message only ("Connection terminated unexpectedly") and the
 * server's own refusals by SQLSTATE: class 08 (connection exception), 57P01–57P03 (shut down, crashed,
 * starting up) and 53300 (too many connections). A refused or reset socket reads the same from pg as from
 * ioredis: src/infra/unavailable.ts tells those apart from nothing.
 */
const PG_STATES = /^(08...|57P0[123]|53300)$/;
const PG_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable/;
const MONGO_NAMES = /^Mongo(Network|NetworkTimeout|ServerSelection|PoolCleared|TopologyClosed|NotConnected)Error$/;

/** Whether `error`, or an error it was caused by, says that the store is unreachable. */
export function isStoreUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && PG_STATES.test(code)) return true;
    if (MONGO_NAMES.test(current.name) || PG_MESSAGES.test(current.message)) return true;
  }
  return false;
}
