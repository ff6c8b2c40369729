/** One transaction on a client of the pool. */
import type { Pool, PoolClient } from 'pg';

/** Runs `work` between BEGIN and COMMIT (ROLLBACK when it throws); a client whose ROLLBACK failed is discarded. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
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
    client.release(!healthy);
  }
}
