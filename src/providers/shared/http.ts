/** The undici dispatcher that provider adapters share: keep-alive pools with explicit timeouts. */
import { Agent, Pool, type Dispatcher } from 'undici';

/** Timeouts and pool size of upstream HTTP calls (from config; this module reads no env). */
export interface UpstreamHttpOptions {
  /** TCP + TLS handshake limit. */
  connectTimeoutMs: number;
  /** Limit between sending the request and receiving the response headers. */
  headersTimeoutMs: number;
  /** Limit on the idle time between two body chunks (not the total body time). */
  bodyTimeoutMs: number;
  /** Connections per upstream origin. */
  connections: number;
  /** Origins (`https://host:port`) whose connect limit the catalog sets apart from `connectTimeoutMs`. */
  connectTimeouts?: ReadonlyMap<string, number>;
}

/** A dispatcher to pass to undici's `request`, and its shutdown. */
export interface UpstreamHttp {
  dispatcher: Dispatcher;
  /** The configured idle limit inside a body, which a call may only shorten. */
  bodyTimeoutMs: number;
  /** Waits for in-flight requests, then closes every pooled connection. */
  close(): Promise<void>;
}

const KEEP_ALIVE_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_MAX_TIMEOUT_MS = 120_000;

// undici runs headers/body timeouts on its coarse "fast timers" (lib/util/timers.js, ~1 s resolution):
// a 300 ms headersTimeout fires after up to about a second. Sub-second precision needs the caller's own timer.
/** Builds one Agent (a Pool per origin); undici's defaults of 300 s for headers and body are far too long for us. */
export function createUpstreamHttp(options: UpstreamHttpOptions): UpstreamHttp {
  const connectTimeouts = options.connectTimeouts ?? new Map<string, number>();
  const agent = new Agent({
    // One pool per origin, as undici's own factory makes, with the origin's connect limit.
    factory: (origin, poolOptions) =>
      new Pool(origin, { ...poolOptions, connectTimeout: connectTimeouts.get(new URL(String(origin)).origin) ?? options.connectTimeoutMs }),
    connections: options.connections,
    connectTimeout: options.connectTimeoutMs,
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MAX_TIMEOUT_MS,
  });
  return {
    dispatcher: agent,
    bodyTimeoutMs: options.bodyTimeoutMs,
    close: () => agent.close(),
  };
}
