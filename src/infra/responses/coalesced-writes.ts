/**
 * Writes records as they come, one write at a time: those that arrive while a write is on its way
 * go together in the next one. An idle process writes each at once; under load a write carries
 * what arrived during one round trip, so the writes per record fall exactly when they cost most.
 */

// Most records one write carries.
const MAX_BATCH = 256;

interface Pending<T> {
  record: T;
  resolve(): void;
  reject(error: unknown): void;
}

/** A writer of records of type T in coalesced batches. */
export class CoalescedWrites<T> {
  readonly #write: (records: T[]) => Promise<void>;
  #pending: Array<Pending<T>> = [];
  #writing = false;

  constructor(write: (records: T[]) => Promise<void>) {
    this.#write = write;
  }

  /** Resolves once the write that carried `record` succeeded; rejects with its error. */
  write(record: T): Promise<void> {
    const written = new Promise<void>((resolve, reject) => this.#pending.push({ record, resolve, reject }));
    if (!this.#writing) void this.#flush();
    return written;
  }

  async #flush(): Promise<void> {
    this.#writing = true;
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, MAX_BATCH);
      try {
        await this.#write(batch.map((pending) => pending.record));
        for (const pending of batch) pending.resolve();
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.#writing = false;
  }
}
