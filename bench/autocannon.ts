/** A typed wrapper around autocannon 9's programmatic API (it ships no types); only what the bench uses. */
import { createRequire } from 'node:module';

/** Options of one autocannon run. */
export interface LoadOptions {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** Seconds without a response before a request counts as a timeout. */
  timeout: number;
  /** Headers that must differ on every request (e.g. a fresh Idempotency-Key), added to `headers`. */
  freshHeaders?: () => Record<string, string>;
}

interface Histogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
}

/** The aggregated result of one run (latencies in ms, requests per second). */
export interface LoadResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  '2xx': number;
  latency: Histogram & { totalCount: number };
  requests: Histogram & { total: number; sent: number };
}

/** What autocannon hands a request's `setupRequest` and expects back. */
interface RequestData {
  headers: Record<string, string>;
}

type AutocannonOptions = Omit<LoadOptions, 'freshHeaders'> & { requests?: Array<{ setupRequest: (request: RequestData) => RequestData }> };
type Autocannon = (options: AutocannonOptions) => PromiseLike<LoadResult>;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** Runs autocannon once and resolves with its aggregated result. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { freshHeaders, ...rest } = options;
  if (!freshHeaders) return autocannon(rest);
  // A setupRequest makes autocannon rebuild the request before every send.
  return autocannon({ ...rest, requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, ...freshHeaders() } }) }] });
}
