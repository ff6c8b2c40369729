import type { Queue } from 'bullmq';
import type { JobBatch, JobCommon } from './job.ts';
import type { RedisKeys } from '../redis/keys.ts';

// BullMQ's largest priority (2^21 - 1); a queue position beyond it waits with the last.
const MAX_PRIORITY = 2_097_151;

/**
 * BullMQ serves its wait list (plain jobs, FIFO) before any prioritized job, and a plain add
 * costs Redis less. So a request within its tenant's fair share is added plain, and only one
 * beyond it gets its queue position as priority: a tenant's burst then waits behind every
 * other tenant's requests, and fairness costs something only when a tenant is over its share.
 */
export function jobPriority(queued: number, fairShare: number): number | undefined {
  return queued <= fairShare ? undefined : Math.min(queued, MAX_PRIORITY);
}

/** How requests are gathered into jobs. */
export interface BatchingPolicy {
  /** A tenant's outstanding requests that go plainly into the queue (see jobPriority). */
  fairShare: number;
  /** Most requests in one job (1: a job per request). */
  maxBatch: number;
  /** How long the first request of an idle group waits for others (0: not at all). */
  windowMs: number;
}

/** A queued job of one or more requests, as the web process that queued it knows it. */
export class QueuedBatch {
  readonly jobId: string;
  readonly shard: number;
  readonly queue: Queue<JobBatch>;
  readonly requestIds: readonly string[];
  /** What undoes each request's admission should the job never run; emptied once done. */
  readonly #undo: Map<string, () => void>;
  readonly #gone = new Set<string>();
  #removal: Promise<boolean> | null = null;
  #removed = false;

  constructor(shard: number, queue: Queue<JobBatch>, members: ReadonlyArray<{ requestId: string; onAbandoned: () => void }>) {
    this.shard = shard;
    this.queue = queue;
    this.requestIds = members.map((member) => member.requestId);
    this.jobId = this.requestIds[0] as string;
    this.#undo = new Map(members.map((member) => [member.requestId, member.onAbandoned]));
  }

  /** Marks a request whose client went away; true when every request of the job has gone. */
  cancel(requestId: string): boolean {
    this.#gone.add(requestId);
    return this.#gone.size === this.requestIds.length;
  }

  /** Whether the job was removed: nothing will answer its requests but the web tier. */
  get removed(): boolean {
    return this.#removed;
  }

  /**
   * Removes the job if no worker has taken it (BullMQ refuses to remove a locked, running job),
   * and then undoes the admission of every request of it, once: one whose client left (an
   * idempotent one too, whose key would otherwise stay claimed) as well as one still waiting.
   * Concurrent callers share one attempt; a failed attempt may be tried again.
   */
  remove(): Promise<boolean> {
    this.#removal ??= this.queue.remove(this.jobId).then(
      (count) => {
        if (count === 1) this.#abandon();
        return count === 1;
      },
      (error: unknown) => {
        this.#removal = null;
        throw error;
      },
    );
    return this.#removal;
  }

  /** The job vanished before any worker ran it (its Redis lost it): undo every request's admission, once. */
  vanished(): void {
    this.#abandon();
  }

  #abandon(): void {
    this.#removed = true;
    for (const onAbandoned of this.#undo.values()) onAbandoned();
    this.#undo.clear();
  }
}

interface Pending {
  job: JobCommon;
  onAbandoned: () => void;
  priority: number | undefined;
  resolve(batch: QueuedBatch): void;
  reject(error: unknown): void;
}

interface Group {
  shard: number;
  queue: Queue<JobBatch>;
  pending: Pending[];
  adding: number;
  /** Cancels the flush scheduled for the first request of the idle group, while one is. */
  cancelFlush: (() => void) | null;
}

/**
 * Puts requests into BullMQ jobs, several to a job when they arrive together. Requests of one
 * group (a queue shard's plain requests, or one tenant's prioritized ones) that arrive while the
 * group's previous add is on its way to Redis go together in the next job: an idle gateway adds
 * each request at once, and jobs grow exactly when Redis answers slowly, that is under load.
 */
export class JobBatcher {
  readonly #queues: ReadonlyArray<Queue<JobBatch>>;
  readonly #keys: RedisKeys;
  readonly #policy: BatchingPolicy;
  readonly #groups = new Map<string, Group>();

  constructor(queues: ReadonlyArray<Queue<JobBatch>>, keys: RedisKeys, policy: BatchingPolicy) {
    this.#queues = queues;
    this.#keys = keys;
    this.#policy = policy;
  }

  /**
   * Queues the request; resolves with the job it went into once that job is in Redis.
   * `onAbandoned` undoes its admission if the job is removed before any worker runs it. A
   * background request waits behind every interactive one, its tenant's included, in jobs of its own.
   */
  add(job: JobCommon, queued: number, onAbandoned: () => void): Promise<QueuedBatch> {
    const priority = job.background ? MAX_PRIORITY : jobPriority(queued, this.#policy.fairShare);
    const shard = this.#keys.shardOf(job.tenantId);
    const name = job.background ? `${shard}:background` : priority === undefined ? `${shard}` : `${shard}:${job.tenantId}`;
    let group = this.#groups.get(name);
    if (!group) {
      const queue = this.#queues[shard];
      if (!queue) throw new Error(`no queue for shard ${shard}`);
      group = { shard, queue, pending: [], adding: 0, cancelFlush: null };
      this.#groups.set(name, group);
    }
    const added = new Promise<QueuedBatch>((resolve, reject) => group.pending.push({ job, onAbandoned, priority, resolve, reject }));
    this.#schedule(name, group);
    return added;
  }

  #schedule(name: string, group: Group): void {
    if (group.pending.length >= this.#policy.maxBatch) return this.#flush(name, group);
    if (group.adding > 0 || group.cancelFlush) return;
    // Without a window, the first request of an idle group still waits for the requests read in the
    // same turn of the event loop (a busy web process reads many at once): they share its job.
    if (this.#policy.windowMs === 0) {
      const immediate = setImmediate(() => this.#flush(name, group));
      group.cancelFlush = () => clearImmediate(immediate);
    } else {
      const timer = setTimeout(() => this.#flush(name, group), this.#policy.windowMs);
      group.cancelFlush = () => clearTimeout(timer);
    }
  }

  #flush(name: string, group: Group): void {
    group.cancelFlush?.();
    group.cancelFlush = null;
    const members = group.pending.splice(0, this.#policy.maxBatch);
    if (members.length === 0) {
      if (group.adding === 0) this.#groups.delete(name);
      return;
    }
    const requests = members.map((member) => member.job);
    const batch = new QueuedBatch(
      group.shard,
      group.queue,
      members.map((member) => ({ requestId: member.job.requestId, onAbandoned: member.onAbandoned })),
    );
    // A tenant's prioritized job waits as long as its earliest request would have.
    const priorities = members.flatMap((member) => (member.priority === undefined ? [] : [member.priority]));
    const priority = priorities.length > 0 ? Math.min(...priorities) : undefined;
    group.adding++;
    group.queue
      .add('completion', { requests }, { jobId: batch.jobId, ...(priority ? { priority } : {}), removeOnComplete: true, removeOnFail: { age: 3600 } })
      .then(
        () => members.forEach((member) => member.resolve(batch)),
        (error: unknown) => members.forEach((member) => member.reject(error)),
      )
      .finally(() => {
        group.adding--;
        // Those that arrived meanwhile have waited one round trip already: they go now.
        if (group.pending.length > 0) this.#flush(name, group);
        else if (group.adding === 0 && !group.cancelFlush) this.#groups.delete(name);
      });
  }
}
