/**
 * The requests the web tier cancelled (their clients went away), by request id. A job carries
 * several requests, so a cancellation aborts one request, not its job: a running request's
 * signal is aborted at once; one whose job has not started yet is remembered, and starts aborted.
 */
export class Cancellations {
  readonly #running = new Map<string, AbortController>();
  // Insertion order is expiry order (one lifetime for all), so expired entries are at the front.
  readonly #remembered = new Map<string, number>();
  readonly #rememberMs: number;
  readonly #now: () => number;

  /** `rememberMs`: how long a cancellation waits for its job (the web tier's pickup deadline bounds the wait). */
  constructor(rememberMs: number, now: () => number = Date.now) {
    this.#rememberMs = rememberMs;
    this.#now = now;
  }

  /** The web tier cancelled the request. */
  cancel(requestId: string): void {
    const running = this.#running.get(requestId);
    if (running) return running.abort(new Error('client disconnected'));
    this.#forgetExpired();
    this.#remembered.set(requestId, this.#now() + this.#rememberMs);
  }

  /** The request starts: its signal aborts with its job's, or when the request is cancelled. */
  start(requestId: string, jobSignal: AbortSignal): AbortSignal {
    const controller = new AbortController();
    if (this.#remembered.delete(requestId)) controller.abort(new Error('client disconnected'));
    else if (jobSignal.aborted) controller.abort(jobSignal.reason);
    else jobSignal.addEventListener('abort', () => controller.abort(jobSignal.reason), { once: true, signal: controller.signal });
    this.#running.set(requestId, controller);
    return controller.signal;
  }

  /** The request ended. */
  end(requestId: string): void {
    this.#running.delete(requestId);
  }

  #forgetExpired(): void {
    const now = this.#now();
    for (const [requestId, expiresAt] of this.#remembered) {
      if (expiresAt > now) break;
      this.#remembered.delete(requestId);
    }
  }
}
