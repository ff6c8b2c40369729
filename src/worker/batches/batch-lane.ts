/** Whether any interactive job (a live request, or a background response) of the shard waits for a worker. */
export type InteractiveWaiting = (shard: number) => Promise<boolean>;

/** How much of the worker's concurrency batch lines may use. */
export interface LaneLimits {
  /** Lines of every tenant at once. */
  slots: number;
  /** Lines of one tenant at once. */
  tenantSlots: number;
  /** How often a waiting line looks again at the interactive queue. */
  pollMs: number;
}

interface Waiter {
  tenantId: string;
  shard: number;
  /** A deployment the line would go to first, which a 429 may have slowed. */
  alias: string | null;
  grant(release: () => void): void;
}

/**
 * The batch lane of one worker process: batch lines run in the capacity live traffic leaves. A
 * line takes a slot only while the lane has one free (overall and for its tenant) and no
 * interactive job of its shard waits; a deployment that answered a batch line 429 takes no new
 * line until its Retry-After (or a backoff) has passed. Live requests never wait here: they have
 * the worker's whole concurrency, and the lane merely stops taking lines while they queue.
 */
export class BatchLane {
  readonly #limits: LaneLimits;
  readonly #interactiveWaiting: InteractiveWaiting;
  readonly #waiters: Waiter[] = [];
  readonly #byTenant = new Map<string, number>();
  readonly #slowedUntil = new Map<string, number>();
  readonly #seen = new Map<number, { busy: boolean; at: number }>();
  #inUse = 0;
  #timer: NodeJS.Timeout | null = null;
  #pumping = false;
  #again = false;

  constructor(limits: LaneLimits, interactiveWaiting: InteractiveWaiting) {
    this.#limits = limits;
    this.#interactiveWaiting = interactiveWaiting;
  }

  /** Lines running now. */
  get running(): number {
    return this.#inUse;
  }

  /** Waits for a slot for one line; the function returned gives it back. */
  acquire(tenantId: string, shard: number, alias: string | null): Promise<() => void> {
    return new Promise((resolve) => {
      this.#waiters.push({ tenantId, shard, alias, grant: resolve });
      void this.#pump();
    });
  }

  /** A deployment answered 429: no new line goes to it for `retryAfterMs` (a second when it said nothing). */
  slowDown(alias: string, retryAfterMs: number | null): void {
    const until = Date.now() + Math.max(retryAfterMs ?? 1_000, 100);
    if ((this.#slowedUntil.get(alias) ?? 0) < until) this.#slowedUntil.set(alias, until);
  }

  /** Stops the timer; lines still waiting are never granted. */
  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#waiters.length = 0;
  }

  #release(tenantId: string): void {
    this.#inUse--;
    const held = (this.#byTenant.get(tenantId) ?? 1) - 1;
    if (held === 0) this.#byTenant.delete(tenantId);
    else this.#byTenant.set(tenantId, held);
    void this.#pump();
  }

  /** Grants waiting lines in order while the lane has room; one whose tenant or deployment is held back lets the others by. */
  async #pump(): Promise<void> {
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#again = false;
        await this.#grant();
      } while (this.#again);
    } finally {
      this.#pumping = false;
    }
    this.#schedule();
  }

  async #grant(): Promise<void> {
    const now = Date.now();
    for (let index = 0; index < this.#waiters.length && this.#inUse < this.#limits.slots;) {
      const waiter = this.#waiters[index] as Waiter;
      const slowed = waiter.alias !== null && (this.#slowedUntil.get(waiter.alias) ?? 0) > now;
      if (slowed || (this.#byTenant.get(waiter.tenantId) ?? 0) >= this.#limits.tenantSlots || (await this.#busy(waiter.shard, now))) {
        index++;
        continue;
      }
      this.#waiters.splice(index, 1);
      this.#inUse++;
      this.#byTenant.set(waiter.tenantId, (this.#byTenant.get(waiter.tenantId) ?? 0) + 1);
      let released = false;
      waiter.grant(() => {
        if (released) return;
        released = true;
        this.#release(waiter.tenantId);
      });
    }
  }

  /** Whether interactive jobs of the shard wait, as last seen within a poll period: one Redis look per shard and period, not one per line. */
  async #busy(shard: number, now: number): Promise<boolean> {
    const seen = this.#seen.get(shard);
    if (seen && now - seen.at < this.#limits.pollMs) return seen.busy;
    // Unknown counts as busy: a lane that cannot see the live queue must not take its capacity.
    const busy = await this.#interactiveWaiting(shard).catch(() => true);
    this.#seen.set(shard, { busy, at: Date.now() });
    return busy;
  }

  // Lines that could not start look again after a while: the interactive queue drains, a 429's pause ends.
  #schedule(): void {
    if (this.#timer || this.#waiters.length === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#pump();
    }, this.#limits.pollMs);
    this.#timer.unref();
  }
}
