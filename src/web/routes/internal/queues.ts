import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import { Type, type Static } from '@sinclair/typebox';
import type { JobBatch } from '../../../infra/queue/job.ts';

/** When a worker last showed itself (ms; the heartbeat /readyz reads), null when none has within the window. */
export type LastWorkerBeat = () => Promise<number | null>;

const JOB_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed'] as const;
const Count = () => Type.Integer({ minimum: 0 });

/** GET /internal/v1/queues's answer: each request queue shard's jobs, the workers taking them, and where the board is. */
export const QueuesAnswerSchema = Type.Object({
  object: Type.Literal('queues'),
  shards: Type.Array(
    Type.Object({
      shard: Type.Integer({ minimum: 0 }),
      waiting: Count(),
      prioritized: Count(),
      active: Count(),
      delayed: Count(),
      failed: Count(),
      workers: Type.Integer({ minimum: 0, description: "BullMQ workers connected to the shard's queue." }),
    }),
  ),
  workers: Type.Array(
    Type.Object({
      id: Type.String({ description: "The worker's Redis client id: one per worker process and shard." }),
      shard: Type.Integer({ minimum: 0 }),
      addr: Type.String({ description: "The worker's address, as Redis sees it (host:port)." }),
      last_seen: Type.String({ format: 'date-time', description: "The worker's last command to Redis." }),
    }),
  ),
  last_heartbeat: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When some worker last showed itself (the heartbeat /readyz reads); null: none within READY_WORKER_WINDOW_MS.',
  }),
  board: Type.String({ description: "The queue board's path." }),
});

type QueuesAnswer = Static<typeof QueuesAnswerSchema>;

// BullMQ finds a queue's workers in CLIENT LIST by the name each gives its blocking connection: one
// entry per connection, with Redis's own fields as text (`idle` in seconds since its last command).
async function workersOf(queue: Queue<JobBatch>, shard: number, now: number): Promise<QueuesAnswer['workers']> {
  const clients = (await queue.getWorkers()) as Array<Record<string, string | undefined>>;
  return clients.flatMap(({ id, addr, idle }) =>
    // A Redis without CLIENT LIST (a managed one) answers one entry without an id.
    id === undefined ? [] : [{ id, shard, addr: addr ?? '', last_seen: new Date(now - Number(idle ?? 0) * 1000).toISOString() }],
  );
}

/** The shards' counts and workers, and the heartbeat. */
async function queuesJson(queues: ReadonlyArray<Queue<JobBatch>>, lastBeat: LastWorkerBeat, board: string): Promise<QueuesAnswer> {
  const now = Date.now();
  const [counts, workers, beat] = await Promise.all([
    Promise.all(queues.map((queue) => queue.getJobCounts(...JOB_STATES))),
    Promise.all(queues.map((queue, shard) => workersOf(queue, shard, now))),
    lastBeat(),
  ]);
  return {
    object: 'queues',
    shards: counts.map((count, shard) => ({
      shard,
      waiting: count.waiting ?? 0,
      prioritized: count.prioritized ?? 0,
      active: count.active ?? 0,
      delayed: count.delayed ?? 0,
      failed: count.failed ?? 0,
      workers: workers[shard]?.length ?? 0,
    })),
    workers: workers.flat(),
    last_heartbeat: beat === null ? null : new Date(beat).toISOString(),
    board,
  };
}

/** GET /internal/v1/queues: the request queue's shards and workers (the operator tenant's admins: every tenant's jobs are there). */
export async function internalQueueRoutes(
  app: FastifyInstance,
  options: { queues: ReadonlyArray<Queue<JobBatch>>; lastBeat: LastWorkerBeat; board: string },
): Promise<void> {
  app.get('/queues', { config: { permission: 'queues.read' } }, async () => queuesJson(options.queues, options.lastBeat, options.board));
}
