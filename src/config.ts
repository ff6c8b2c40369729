import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { RedisTarget } from './infra/redis/connections.ts';
import { TENANT_LIST_SOURCE, TenantIdSchema } from './domain/tenants/tenant-id.ts';

/** Thrown when the environment is invalid; its message is the one line the process prints before exiting. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const Millis = (defaultMs: number, description: string) => Type.Integer({ minimum: 1, maximum: 86_400_000, default: defaultMs, description });

/** Every environment variable the gateway reads, with its default and bounds. */
export const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'HTTP port of the web process.' }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Interface the web process binds.' }),
  METRICS_PORT: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 65535,
      description: "Port of the process's operations listener (/metrics, /healthz, /readyz); unset: none, and no metrics are kept.",
    }),
  ),
  METRICS_HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Interface the operations listener binds; never the public one.' }),
  METRICS_TENANTS: Type.String({
    pattern: TENANT_LIST_SOURCE,
    default: '',
    description: "Tenants named in the metrics' tenant label (comma-separated; '*': every tenant); the others are counted as 'other'.",
  }),
  READY_WORKER_WINDOW_MS: Millis(15_000, '/readyz of the web process reports the queue down (status degraded) when no worker has shown itself for this long.'),
  REDIS_URL: Type.Optional(
    Type.String({
      pattern: '^rediss?://',
      description: 'One Redis (redis:// or rediss://) for the queue, reply channels and counters; it must run with maxmemory-policy noeviction.',
    }),
  ),
  REDIS_CLUSTER_NODES: Type.Optional(
    Type.String({
      pattern: '^[^,:\\s]+:\\d{1,5}(,[^,:\\s]+:\\d{1,5})*$',
      description:
        'Seed nodes of a Redis Cluster (host:port,host:port,…; Redis 7 or newer); wins over REDIS_URL. Every master must run with noeviction (docs/scale-out.md).',
    }),
  ),
  QUEUE_SHARDS: Type.Integer({
    minimum: 1,
    maximum: 1024,
    default: 1,
    description:
      "Queues the request queue is split into (each its own hash slot); a tenant's requests all go to one. Every process, the CLI included, must use the same number.",
  }),
  REDIS_PREFIX: Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$', default: 'gw', description: 'Prefix of every Redis key and channel.' }),
  DATABASE_URL: Type.Optional(
    Type.String({ pattern: '^postgres(ql)?://', description: 'PostgreSQL store (one of DATABASE_URL and MONGODB_URI is required).' }),
  ),
  MONGODB_URI: Type.Optional(Type.String({ pattern: '^mongodb(\\+srv)?://', description: 'MongoDB store; wins over DATABASE_URL.' })),
  CATALOG: Type.String({ minLength: 1, description: 'Path of the catalog file (JSON or YAML).' }),
  CONSOLE_DIR: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'Folder of the built web console that /console serves; unset: dist/console of the package (npm run build:console).',
    }),
  ),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'pino log level.' },
  ),
  WORKER_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 256,
    description: 'Jobs one worker process runs at once, per queue shard; a job carries up to QUEUE_BATCH_MAX requests.',
  }),
  WORKER_LOCK_MS: Millis(30_000, "BullMQ lock; a killed worker's job is recovered after about this long."),
  QUEUE_BATCH_MAX: Type.Integer({
    minimum: 1,
    maximum: 1_000,
    default: 16,
    description: 'Most requests one queue job carries; requests that arrive while the previous job is being queued go together (1: a job per request).',
  }),
  QUEUE_BATCH_WINDOW_MS: Type.Integer({
    minimum: 0,
    maximum: 1_000,
    default: 0,
    description: 'How long a request arriving at an idle web process waits for others to share its job (0: not at all).',
  }),
  QUEUE_DEADLINE_MS: Millis(30_000, 'A job no worker picked up by then is removed and answered 503.'),
  REQUEST_TIMEOUT_MS: Millis(600_000, 'Longest a completion may take end to end at the web tier.'),
  BACKGROUND_QUEUE_DEADLINE_MS: Millis(
    21_600_000,
    "A background response (POST /v1/responses with background: true) no worker has started by then ends failed with code 'queue_timeout'; interactive requests of the same tenant run first.",
  ),
  BACKGROUND_RESULT_TTL_S: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 600,
    description:
      'How long a finished background response with store: false (or of a tenant that stores none) can still be retrieved; a stored response is read from Redis this long, then from the store.',
  }),
  RESPONSES_REAP_INTERVAL_MS: Millis(
    30_000,
    "How often a worker looks for background responses whose job was lost with Redis; such a response ends failed with code 'response_lost' within twice this.",
  ),
  WEBHOOK_RETRY_DELAYS_MS: Type.String({
    pattern: '^\\d{1,9}(,\\d{1,9})*$',
    default: '5000,300000,1800000,7200000,18000000,36000000,36000000,36000000,36000000,36000000,36000000',
    description:
      'Delays (ms, comma-separated) between the attempts of a webhook delivery that failed; the default retries for about 3 days (5 s, 5 min, 30 min, 2 h, 5 h, then every 10 h).',
  }),
  WEBHOOK_TIMEOUT_MS: Millis(15_000, 'A webhook endpoint that has not answered within this is retried.'),
  WEBHOOK_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 1_000,
    default: 16,
    description: 'Webhook deliveries one worker process makes at once, apart from model work.',
  }),
  FILE_MAX_BYTES: Type.Integer({
    minimum: 1,
    maximum: 2 ** 40,
    default: 209_715_200,
    description: 'Largest file POST /v1/files stores (200 MB); a larger upload is refused 413 before it is stored whole.',
  }),
  FILE_TTL_S: Type.Integer({
    minimum: 1,
    maximum: 10 * 365 * 86_400,
    default: 30 * 86_400,
    description: "How long a file lives when its upload sets no expires_after (batch inputs, batches' output and error files); the sweep then removes it.",
  }),
  FILES_SWEEP_INTERVAL_MS: Type.Integer({
    minimum: 100,
    maximum: 86_400_000,
    default: 60_000,
    description: 'How often each worker removes expired files.',
  }),
  BATCH_MAX_LINES: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 50_000,
    description: 'Most lines (requests) in one batch input file.',
  }),
  BATCH_COMPLETION_WINDOW_MS: Type.Integer({
    minimum: 100,
    maximum: 7 * 86_400_000,
    default: 86_400_000,
    description: "How long a batch's completion window of '24h' lasts; shorter only to see expiry in a test.",
  }),
  BATCH_LANE_SHARE: Type.Number({
    minimum: 0.01,
    maximum: 1,
    default: 0.5,
    description: "Share of a worker's WORKER_CONCURRENCY that batch lines may use, and only while no interactive job of their shard waits.",
  }),
  BATCH_TENANT_SHARE: Type.Number({
    minimum: 0.01,
    maximum: 1,
    default: 0.25,
    description: "Share of a worker's WORKER_CONCURRENCY that one tenant's batch lines may use.",
  }),
  BATCH_SEGMENT_LINES: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 500,
    description: "Lines of a batch one job of the batch lane runs: a batch's segments spread over the workers.",
  }),
  BATCH_SUPERVISE_INTERVAL_MS: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 2_000,
    description:
      'How often each worker moves batches on: finishing those whose lines all ran, expiring those past their window, requeueing segments Redis lost.',
  }),
  WEBHOOK_ALLOW_PRIVATE_URLS: Type.Boolean({
    default: false,
    description:
      'true: webhook URLs may be http and resolve to private or loopback addresses (tests, private networks); otherwise only https to public addresses.',
  }),
  UPSTREAM_CONNECT_TIMEOUT_MS: Millis(5_000, 'Connect timeout to a provider.'),
  UPSTREAM_HEADERS_TIMEOUT_MS: Millis(120_000, "Time to the provider's response headers, per attempt (shortened to what is left of RETRY_BUDGET_MS)."),
  UPSTREAM_BODY_TIMEOUT_MS: Millis(120_000, "Longest silence inside a provider's response body."),
  UPSTREAM_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 10_000, default: 256, description: 'Keep-alive connections per provider origin.' }),
  RETRY_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 20, default: 5, description: 'Upstream attempts per candidate model.' }),
  RETRY_BUDGET_MS: Millis(
    60_000,
    "Total time a request's attempts may take before the provider's answer begins: each attempt gets what is left of it, so a hanging provider is a 504 within it (raise it for slow non-streamed models).",
  ),
  RETRY_BASE_MS: Millis(1_000, "Base of the backoff min(base·2^n, max) + 0–25 % jitter; a provider's Retry-After wins."),
  RETRY_MAX_DELAY_MS: Millis(60_000, 'Cap of one backoff delay.'),
  KEY_CACHE_TTL_MS: Type.Integer({
    minimum: 0,
    maximum: 10_000,
    default: 5_000,
    description:
      'In-process cache of API keys and tenant status; a revoked key or a disabled tenant works at most this long when the Redis invalidation is lost.',
  }),
  CLIENT_HEADERS_TIMEOUT_MS: Millis(10_000, 'Time a client has to send its request headers; a slower one is answered 408 and disconnected.'),
  CLIENT_REQUEST_TIMEOUT_MS: Millis(60_000, 'Time a client has to send its whole request, body included.'),
  SSE_MAX_BUFFERED_BYTES: Type.Integer({
    minimum: 16 * 1024,
    maximum: 256 * 1024 * 1024,
    default: 1024 * 1024,
    description:
      "Bytes of a stream one client may leave unread (the socket's buffer and the events waiting for it); past it the stream is dropped and its upstream call cancelled.",
  }),
  BODY_LIMIT_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 64 * 1024 * 1024,
    default: 4 * 1024 * 1024,
    description: 'Largest request body (413 above; a larger body is read and thrown away, up to 64 MiB, before the answer).',
  }),
  SHUTDOWN_GRACE_MS: Millis(
    25_000,
    'Time SIGTERM gives open responses and running jobs; a process ends at most 5 s after it, whatever Redis, the store or an upstream do.',
  ),
  SSE_KEEPALIVE_MS: Millis(15_000, 'Interval of SSE comment lines while a stream is silent.'),
  EVENTS_TTL_MS: Millis(
    600_000,
    "Lifetime of a running request's event stream in Redis (gap repair, replay); a finished one keeps it 60 s, or 24 h with an Idempotency-Key.",
  ),
  TENANT_RPM: Type.Integer({ minimum: 0, default: 6_000, description: 'Requests per minute of a tenant without a plan (0: unlimited).' }),
  TENANT_TPM: Type.Integer({ minimum: 0, default: 6_000_000, description: 'Tokens per minute of a tenant without a plan (0: unlimited).' }),
  KEY_RPM: Type.Integer({ minimum: 0, default: 3_000, description: 'Requests per minute of one API key without a plan (0: unlimited).' }),
  KEY_TPM: Type.Integer({ minimum: 0, default: 3_000_000, description: 'Tokens per minute of one API key without a plan (0: unlimited).' }),
  TENANT_MAX_QUEUED: Type.Integer({ minimum: 1, default: 1_000, description: 'Requests of one tenant queued or running at once; more get 429.' }),
  TENANT_FAIR_SHARE: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    default: 32,
    description: "Requests of one tenant queued or running that go plainly into the queue; beyond them a request waits behind other tenants' (0: always).",
  }),
  OPERATOR_TENANT: Type.String({
    pattern: TenantIdSchema.pattern,
    default: 'operator',
    description: 'The tenant whose admins manage other tenants (tenants, their keys, credits, plans).',
  }),
  JWT_ISSUERS: Type.Optional(Type.String({ minLength: 1, description: 'Comma-separated issuer URLs whose JWTs are accepted; unset: API keys only.' })),
  JWT_JWKS_URL: Type.Optional(
    Type.String({ pattern: '^https?://', description: 'JWKS URL when there is one issuer and its keys are not at <issuer>/.well-known/jwks.json.' }),
  ),
  JWT_AUDIENCE: Type.Optional(Type.String({ minLength: 1, description: 'Required `aud` of accepted JWTs.' })),
  JWT_ALGORITHMS: Type.String({
    pattern: '^(RS256|RS384|RS512|PS256|PS384|PS512|ES256|ES384|ES512|EdDSA)(,(RS256|RS384|RS512|PS256|PS384|PS512|ES256|ES384|ES512|EdDSA))*$',
    default: 'RS256,ES256,EdDSA',
    description: 'Accepted signature algorithms (asymmetric only).',
  }),
  JWT_TENANT_CLAIM: Type.String({ minLength: 1, default: 'tenant', description: 'Claim naming the tenant.' }),
  JWT_ROLE_CLAIM: Type.String({ minLength: 1, default: 'role', description: 'Claim naming the role.' }),
  JWT_CLOCK_SKEW_S: Type.Integer({ minimum: 0, maximum: 300, default: 30, description: 'Tolerance on exp/nbf/iat.' }),
  JWKS_CACHE_TTL_MS: Type.Integer({
    minimum: 1000,
    maximum: 86_400_000,
    default: 600_000,
    description: 'A fetched key set is used for this long, never longer.',
  }),
  JWKS_REFETCH_INTERVAL_MS: Type.Integer({
    minimum: 0,
    maximum: 3_600_000,
    default: 10_000,
    description: 'Least time between two fetches of one key set triggered by unknown kids.',
  }),
  JWKS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 3_000, description: 'Connect, headers and body timeout of a key set fetch.' }),
  PII_DEFAULT_MODE: Type.Union([Type.Literal('block'), Type.Literal('mask'), Type.Literal('flag'), Type.Literal('off')], {
    default: 'flag',
    description: 'PII policy of a tenant that has none.',
  }),
  SETTINGS_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 5_000, description: 'In-process cache of budgets, credits and plans.' }),
  // The OpenTelemetry SDK reads its other OTEL_* variables (protocol, headers, batching, sampler) itself.
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(
    Type.String({
      pattern: '^https?://',
      description: 'OTLP collector (e.g. http://collector:4318); set, or the traces endpoint: the process exports traces; neither: no tracing at all.',
    }),
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(
    Type.String({
      pattern: '^https?://',
      description: 'Full URL traces are sent to (e.g. http://collector:4318/v1/traces); wins over OTEL_EXPORTER_OTLP_ENDPOINT for traces.',
    }),
  ),
  OTEL_SERVICE_NAME: Type.Optional(
    Type.String({ minLength: 1, description: "service.name of the process's spans; unset: llm-gateway-web, llm-gateway-worker or llm-gateway-dev." }),
  ),
  OTEL_SDK_DISABLED: Type.Boolean({ default: false, description: 'true: no tracing, whatever the endpoint.' }),
});

/** The raw, validated environment. */
export type Env = Static<typeof EnvSchema>;

/** Where the durable store lives. */
export type StoreConfig = { kind: 'postgres'; databaseUrl: string } | { kind: 'mongodb'; mongodbUri: string };

/** The process configuration: validated, typed, frozen. */
export interface Config {
  env: Readonly<Env>;
  redis: RedisTarget;
  store: StoreConfig;
  /** Reads a provider secret named by the catalog (`api_key_env`). */
  readSecret(name: string): string | undefined;
}

type EnvSource = Record<string, string | undefined>;

function firstProblem(schema: TSchema, value: unknown): string | null {
  const first = Value.Errors(schema, value).First();
  if (!first) return null;
  const name = first.path.replace(/^\//, '');
  const raw = (value as Record<string, unknown>)[name];
  const shown = raw === undefined ? 'it is not set' : `got ${JSON.stringify(raw)}`;
  return `Invalid environment variable ${name || '(root)'}: ${first.message}; ${shown}.`;
}

function parseEnv<T extends TSchema>(schema: T, source: EnvSource): Static<T> {
  const known = Object.fromEntries(
    Object.keys(schema.properties as object)
      .map((key) => [key, source[key]] as const)
      .filter(([, value]) => value !== undefined && value !== ''),
  );
  // Value.Convert truncates '80.5' or '1e3' to an integer; such text is an error, not a number.
  const properties = schema.properties as Record<string, TSchema>;
  for (const [key, value] of Object.entries(known)) {
    if (properties[key]?.type === 'integer' && !/^-?\d+$/.test(String(value))) {
      throw new ConfigError(`Invalid environment variable ${key}: Expected integer; got ${JSON.stringify(value)}.`);
    }
  }
  const converted = Value.Convert(schema, Value.Default(schema, known));
  const problem = firstProblem(schema, converted);
  if (problem) throw new ConfigError(problem);
  return converted;
}

const StoreEnvSchema = Type.Pick(EnvSchema, ['DATABASE_URL', 'MONGODB_URI']);

/** The store part alone, for the CLI and `release`. */
export function loadStoreConfig(source: EnvSource = process.env): StoreConfig {
  const env = parseEnv(StoreEnvSchema, source);
  if (env.MONGODB_URI) return { kind: 'mongodb', mongodbUri: env.MONGODB_URI };
  if (env.DATABASE_URL) return { kind: 'postgres', databaseUrl: env.DATABASE_URL };
  throw new ConfigError('Invalid environment variable DATABASE_URL: set DATABASE_URL (PostgreSQL) or MONGODB_URI (MongoDB).');
}

/** The Redis of REDIS_CLUSTER_NODES, else of REDIS_URL; null when neither is set. */
function redisTargetOf(env: { REDIS_URL?: string | undefined; REDIS_CLUSTER_NODES?: string | undefined }): RedisTarget | null {
  if (env.REDIS_CLUSTER_NODES) {
    const nodes = env.REDIS_CLUSTER_NODES.split(',').map((node) => {
      const colon = node.lastIndexOf(':');
      return { host: node.slice(0, colon), port: Number(node.slice(colon + 1)) };
    });
    return { kind: 'cluster', nodes };
  }
  return env.REDIS_URL ? { kind: 'single', url: env.REDIS_URL } : null;
}

/**
 * The whole configuration. `defaults` fill variables the environment leaves unset
 * (development mode uses it to run with no set-up).
 */
export function loadConfig(source: EnvSource = process.env, defaults: EnvSource = {}): Config {
  const merged: EnvSource = { ...defaults };
  for (const [key, value] of Object.entries(source)) if (value !== undefined && value !== '') merged[key] = value;
  const env = Object.freeze(parseEnv(EnvSchema, merged));
  const redis = redisTargetOf(env);
  if (!redis)
    throw new ConfigError('Invalid environment variable REDIS_URL: one Redis (REDIS_URL) or a Redis Cluster (REDIS_CLUSTER_NODES) is required; it is not set.');
  const store = loadStoreConfig(merged);
  const secrets = { ...source };
  return Object.freeze({ env, redis, store, readSecret: (name: string) => secrets[name] });
}

/** What the CLI may use besides the store: Redis to invalidate caches, the catalog to check models. */
export interface CliConfig {
  store: StoreConfig;
  redis: RedisTarget | null;
  redisPrefix: string;
  queueShards: number;
  catalogPath: string | null;
}

const CliEnvSchema = Type.Composite([
  Type.Partial(Type.Pick(EnvSchema, ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'CATALOG'])),
  Type.Pick(EnvSchema, ['REDIS_PREFIX', 'QUEUE_SHARDS']),
]);

/** The CLI's configuration: the store is required, Redis and the catalog are used when set. */
export function loadCliConfig(source: EnvSource = process.env): CliConfig {
  const env = parseEnv(CliEnvSchema, source);
  return {
    store: loadStoreConfig(source),
    redis: redisTargetOf(env),
    redisPrefix: env.REDIS_PREFIX,
    queueShards: env.QUEUE_SHARDS,
    catalogPath: env.CATALOG ?? null,
  };
}
