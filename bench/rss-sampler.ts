/**
 * Peak resident memory of named processes over a span, sampled from /proc (VmRSS) every few
 * milliseconds: VmHWM is a process's peak over its whole life, so it cannot tell one span's peak
 * from an earlier one's.
 */
import { readMemory } from './proc-stats.ts';

/** KiB by process name. */
export type RssByProcess = Record<string, number>;

/** A span's peak of each process, and when it was reached (seconds after the span began). */
export interface RssSpan {
  peakKb: RssByProcess;
  peakAtS: Record<string, number>;
}

/** Samples every `everyMs` from `start()` to `stop()`, which returns the largest VmRSS seen of each process and when. */
export class RssSampler {
  readonly #pids: ReadonlyMap<string, number>;
  readonly #everyMs: number;
  #peak: RssSpan = { peakKb: {}, peakAtS: {} };
  #startedAt = 0;
  #timer: NodeJS.Timeout | null = null;
  #sampling: Promise<void> = Promise.resolve();

  constructor(pids: ReadonlyMap<string, number>, everyMs = 50) {
    this.#pids = pids;
    this.#everyMs = everyMs;
  }

  /** VmRSS of each process now. */
  async now(): Promise<RssByProcess> {
    const entries = await Promise.all([...this.#pids].map(async ([name, pid]) => [name, (await readMemory(pid))?.currentKb ?? 0] as const));
    return Object.fromEntries(entries);
  }

  async #sample(): Promise<void> {
    for (const [name, kb] of Object.entries(await this.now())) {
      if (kb <= (this.#peak.peakKb[name] ?? 0)) continue;
      this.#peak.peakKb[name] = kb;
      this.#peak.peakAtS[name] = (performance.now() - this.#startedAt) / 1000;
    }
  }

  /** Begins a span (its first sample taken at once). */
  async start(): Promise<void> {
    this.#peak = { peakKb: {}, peakAtS: {} };
    this.#startedAt = performance.now();
    await this.#sample();
    this.#timer = setInterval(() => {
      this.#sampling = this.#sampling.then(() => this.#sample());
    }, this.#everyMs);
    // A bench that fails mid-span exits without stopping it.
    this.#timer.unref();
  }

  /** Ends the span: the peak of each process over it, a last sample included. */
  async stop(): Promise<RssSpan> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#sampling;
    await this.#sample();
    return this.#peak;
  }
}
