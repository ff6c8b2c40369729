import type { RedisClient } from '../../infra/redis/connections.ts';
import type { RedisKeys } from '../../infra/redis/keys.ts';
import { SETTLED_MARKER_TTL_MS } from '../../domain/budget/budget-ledger.ts';

/**
 * Whether a batch line ended, from its settlement's marker: the request's last script call writes
 * it (for a day) with the line's result and usage record, so a line whose marker is there has its
 * result in the store or on its way through the outbox, and must not run again. A line refused by
 * admission, which settles nothing, gets the marker once its result is queued.
 */
export interface LineEnds {
  /** Of each request id, whether it ended. */
  ended(tenantId: string, requestIds: readonly string[]): Promise<boolean[]>;
  /** Marks a line ended that settled nothing (admission refused it). */
  end(tenantId: string, requestId: string): Promise<void>;
}

/** The markers in Redis: one pipelined EXISTS per look (the ids of one tenant share its slot). */
export function lineEnds(redis: RedisClient, keys: RedisKeys): LineEnds {
  return {
    async ended(tenantId, requestIds) {
      if (requestIds.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const requestId of requestIds) pipeline.exists(keys.settled(tenantId, requestId));
      const answers = (await pipeline.exec()) ?? [];
      return answers.map(([error, count]) => {
        if (error) throw error;
        return count === 1;
      });
    },
    async end(tenantId, requestId) {
      await redis.set(keys.settled(tenantId, requestId), '1', 'PX', SETTLED_MARKER_TTL_MS, 'NX');
    },
  };
}
