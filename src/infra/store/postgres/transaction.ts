/** One transaction on a client of the pool. */
import type { Pool, PoolClient } from 'pg';

// pg-pool listens for a client's 'error' only while the client is idle. A checked-out client whose connection
// drops (a PostgreSQL cut) emits 'error' besides failing its query, and an 'error' with no listener ends the
// process; the query's own rejection is what reports the loss.
/** A listener for a checked-out client's 'error', to add while it is out and remove before it is released. */
export const ignoreDroppedConnection = (): void => undefined;

/** Runs `work` between BEGIN and COMMIT (ROLLBACK when it throws); a client whose ROLLBACK failed is discarded. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  client.on('error', ignoreDroppedConnection);
  let healthy = true;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    healthy = await client.query('ROLLBACK').then(
      () => true,
      () => false,
    );
    throw error;
  } finally {
    client.off('error', ignoreDroppedConnection);
    client.release(!healthy);
  }
}
