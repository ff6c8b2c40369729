/**
 * What a bench must undo (processes, databases, Redis servers, worktrees), run last first: a phase
 * undoes its own entries as it ends, and a watchdog or a signal undoes everything, then exits. What a
 * phase still starts after that (a stack half-way up) is undone as soon as it is registered, and the
 * exit waits for it, 30 s at most.
 */

/** One undo action. */
export type Cleanup = () => Promise<void>;

/** A stack of undo actions with a watchdog. */
export class CleanupStack {
  readonly #name: string;
  readonly #cleanups: Cleanup[] = [];
  /** Phases running, and the undo actions registered after the abort. */
  readonly #open = new Set<Promise<unknown>>();
  readonly #late = new Set<Promise<void>>();
  #aborted = false;
  #unwinding: Promise<void> = Promise.resolve();

  /** `name` prefixes what it writes to stderr. */
  constructor(name: string) {
    this.#name = name;
  }

  /** Adds an undo action; run at once when the bench is already stopping (it was stopped while this was starting). */
  register(cleanup: Cleanup): void {
    if (this.#aborted) this.#late.add(cleanup().catch(() => undefined));
    else this.#cleanups.push(cleanup);
  }

  /** Throws once the bench is stopping: a phase calls it between its steps, to give up rather than start more. */
  throwIfStopping(): void {
    if (this.#aborted) throw new Error(`${this.#name} is stopping`);
  }

  /** Runs `phase`, then undoes what it registered, whether it succeeded or not; refused once the bench is stopping. */
  async scope<T>(phase: () => Promise<T>): Promise<T> {
    this.throwIfStopping();
    const mark = this.#cleanups.length;
    const running = (async () => {
      try {
        return await phase();
      } finally {
        await this.unwind(mark);
      }
    })();
    this.#open.add(running);
    try {
      return await running;
    } finally {
      this.#open.delete(running);
    }
  }

  /**
   * Undoes the entries above `downTo` (all by default), last first; one that fails is reported and passed over.
   * It starts once the unwind under way has ended: an abort's and the bench's own (a `finally`) would
   * otherwise pop entries side by side, a Redis server stopped while its stack still closes, and the
   * abort exit while the other still undoes what it popped.
   */
  unwind(downTo = 0): Promise<void> {
    this.#unwinding = this.#unwinding.then(async () => {
      while (this.#cleanups.length > downTo) {
        const cleanup = this.#cleanups.pop() as Cleanup;
        await cleanup().catch((error: unknown) => process.stderr.write(`cleanup: ${String(error)}\n`));
      }
    });
    return this.#unwinding;
  }

  /** Undoes everything, waits for the phases under way to give up, and exits with `code` (after 30 s at the latest). */
  abort(why: string, code: number): void {
    if (this.#aborted) return;
    process.stderr.write(`${this.#name}: ${why}; cleaning up\n`);
    this.#aborted = true;
    const forced = setTimeout(() => process.exit(code), 30_000);
    const undo = async () => {
      await this.unwind();
      await Promise.allSettled([...this.#open]);
      await Promise.allSettled([...this.#late]);
    };
    void undo().finally(() => {
      clearTimeout(forced);
      process.exit(code);
    });
  }

  /** Exits with `code`, unless an abort is under way: that exits once everything is undone. */
  exit(code: number): void {
    if (!this.#aborted) process.exit(code);
  }

  /** Aborts after `budgetMs` or on SIGINT/SIGTERM; returns what disarms the watchdog. */
  guard(budgetMs: number): () => void {
    const watchdog = setTimeout(() => this.abort(`over its ${Math.round(budgetMs / 1000)} s budget`, 2), budgetMs);
    watchdog.unref();
    process.once('SIGINT', () => this.abort('SIGINT', 130));
    process.once('SIGTERM', () => this.abort('SIGTERM', 130));
    return () => clearTimeout(watchdog);
  }
}

/** Runs a bench's `main` and exits with its code, or with 1 after reporting what it threw; `cleanups` decides when to exit. */
export function runBench(name: string, cleanups: CleanupStack, main: () => Promise<number>): void {
  main().then(
    (code) => cleanups.exit(code),
    (error: unknown) => {
      process.stderr.write(`${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      cleanups.exit(1);
    },
  );
}
