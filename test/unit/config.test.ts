import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadStoreConfig } from '../../src/config.ts';

const REQUIRED = {
  REDIS_URL: 'redis://127.0.0.1:6379',
  DATABASE_URL: 'postgres://u@127.0.0.1:5432/gw',
  CATALOG: 'catalog/dev.yaml',
};

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig defaults', () => {
  it('fills every unset variable with its default', () => {
    const { env } = loadConfig(REQUIRED);
    expect(env).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
      REDIS_PREFIX: 'gw',
      LOG_LEVEL: 'info',
      WORKER_CONCURRENCY: 256,
      WORKER_LOCK_MS: 30_000,
      QUEUE_DEADLINE_MS: 30_000,
      REQUEST_TIMEOUT_MS: 600_000,
      UPSTREAM_CONNECT_TIMEOUT_MS: 5_000,
      UPSTREAM_HEADERS_TIMEOUT_MS: 120_000,
      UPSTREAM_BODY_TIMEOUT_MS: 120_000,
      UPSTREAM_CONNECTIONS: 256,
      RETRY_MAX_ATTEMPTS: 5,
      RETRY_BUDGET_MS: 60_000,
      RETRY_BASE_MS: 1_000,
      RETRY_MAX_DELAY_MS: 60_000,
      KEY_CACHE_TTL_MS: 5_000,
      BODY_LIMIT_BYTES: 4 * 1024 * 1024,
      SHUTDOWN_GRACE_MS: 25_000,
      SSE_KEEPALIVE_MS: 15_000,
      EVENTS_TTL_MS: 600_000,
    });
    expect(env.REDIS_URL).toBe(REQUIRED.REDIS_URL);
    expect(env.CATALOG).toBe('catalog/dev.yaml');
  });

  it('treats an empty string as unset', () => {
    expect(loadConfig({ ...REQUIRED, PORT: '' }).env.PORT).toBe(8080);
  });

  it('returns a frozen configuration', () => {
    const config = loadConfig(REQUIRED);
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.env)).toBe(true);
  });
});

describe('loadConfig coercion', () => {
  it('turns integer strings into numbers', () => {
    const { env } = loadConfig({ ...REQUIRED, PORT: '9090', WORKER_CONCURRENCY: '8', KEY_CACHE_TTL_MS: '0', RETRY_MAX_ATTEMPTS: '20' });
    expect(env.PORT).toBe(9090);
    expect(env.WORKER_CONCURRENCY).toBe(8);
    expect(env.KEY_CACHE_TTL_MS).toBe(0);
    expect(env.RETRY_MAX_ATTEMPTS).toBe(20);
  });

  it('ignores variables it does not know', () => {
    const { env } = loadConfig({ ...REQUIRED, SOMETHING_ELSE: 'x' });
    expect(env).not.toHaveProperty('SOMETHING_ELSE');
  });
});

describe('loadConfig errors', () => {
  const bad: Array<[name: string, value: string]> = [
    ['PORT', 'eighty'],
    ['PORT', '65536'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
    ['REDIS_PREFIX', 'has space'],
    ['REDIS_PREFIX', 'x'.repeat(33)],
    ['DATABASE_URL', 'mysql://127.0.0.1/gw'],
    ['MONGODB_URI', 'postgres://127.0.0.1/gw'],
    ['LOG_LEVEL', 'verbose'],
    ['WORKER_CONCURRENCY', '0'],
    ['WORKER_LOCK_MS', '-1'],
    ['QUEUE_DEADLINE_MS', '86400001'],
    ['RETRY_MAX_ATTEMPTS', '21'],
    ['KEY_CACHE_TTL_MS', '10001'],
    ['BODY_LIMIT_BYTES', '1023'],
    ['EVENTS_TTL_MS', 'soon'],
  ];

  it.each(bad)('%s=%s gives one line naming the variable and the value', (name, value) => {
    const error = configError(() => loadConfig({ ...REQUIRED, [name]: value }));
    expect(error.message).toMatch(new RegExp(`^Invalid environment variable ${name}: .+; got .+\\.$`));
    expect(error.message).toContain(JSON.stringify(value).slice(1, -1));
    expect(error.message).not.toContain('\n');
  });

  // Value.Convert truncates '80.5' to 80 and reads '6e4' as 6: a typo must not silently become 6 ms.
  it.each([
    ['PORT', '80.5'],
    ['RETRY_BUDGET_MS', '6e4'],
    ['WORKER_LOCK_MS', '1e3'],
  ])('rejects non-integer text %s=%s instead of truncating it', (name, value) => {
    const error = configError(() => loadConfig({ ...REQUIRED, [name]: value }));
    expect(error.message).toMatch(new RegExp(`^Invalid environment variable ${name}: .+; got "${value}"\\.$`));
  });

  it.each(['REDIS_URL', 'CATALOG'])('a missing %s is named and said to be unset', (name) => {
    const source: Record<string, string | undefined> = { ...REQUIRED, [name]: undefined };
    const error = configError(() => loadConfig(source));
    expect(error.message).toMatch(new RegExp(`^Invalid environment variable ${name}: .*; it is not set\\.$`));
  });
});

describe('store selection', () => {
  it('uses PostgreSQL when only DATABASE_URL is set', () => {
    expect(loadConfig(REQUIRED).store).toEqual({ kind: 'postgres', databaseUrl: REQUIRED.DATABASE_URL });
  });

  it('lets MONGODB_URI win over DATABASE_URL', () => {
    const mongodbUri = 'mongodb://127.0.0.1:27017/gw';
    expect(loadConfig({ ...REQUIRED, MONGODB_URI: mongodbUri }).store).toEqual({ kind: 'mongodb', mongodbUri });
    expect(loadStoreConfig({ DATABASE_URL: REQUIRED.DATABASE_URL, MONGODB_URI: 'mongodb+srv://c.example.net/gw' })).toEqual({
      kind: 'mongodb',
      mongodbUri: 'mongodb+srv://c.example.net/gw',
    });
  });

  it('names DATABASE_URL when neither store is set', () => {
    const error = configError(() => loadConfig({ ...REQUIRED, DATABASE_URL: undefined }));
    expect(error.message).toMatch(/^Invalid environment variable DATABASE_URL: /);
    expect(error.message).toContain('MONGODB_URI');
    expect(configError(() => loadStoreConfig({})).message).toMatch(/^Invalid environment variable DATABASE_URL: /);
  });
});

describe('defaults argument', () => {
  it('fills what the source leaves unset and is overridden by the source', () => {
    const defaults = {
      REDIS_URL: 'redis://default:6379',
      CATALOG: 'catalog/dev.yaml',
      DATABASE_URL: 'postgres://default/gw',
      PORT: '1234',
      LOG_LEVEL: 'debug',
    };
    const { env, store } = loadConfig({ PORT: '4321', DATABASE_URL: 'postgres://source/gw', LOG_LEVEL: '' }, defaults);
    expect(env.PORT).toBe(4321);
    expect(env.REDIS_URL).toBe('redis://default:6379');
    expect(env.LOG_LEVEL).toBe('debug');
    expect(store).toEqual({ kind: 'postgres', databaseUrl: 'postgres://source/gw' });
  });

  it('lets a default store be overridden by the other kind from the source', () => {
    const { store } = loadConfig({ ...REQUIRED, DATABASE_URL: undefined, MONGODB_URI: 'mongodb://m/gw' }, { DATABASE_URL: 'postgres://default/gw' });
    expect(store).toEqual({ kind: 'mongodb', mongodbUri: 'mongodb://m/gw' });
  });
});

describe('readSecret', () => {
  it('reads variables of the source that the schema does not know', () => {
    const config = loadConfig({ ...REQUIRED, OPENAI_API_KEY: 'sk-test-123' });
    expect(config.readSecret('OPENAI_API_KEY')).toBe('sk-test-123');
    expect(config.readSecret('ANTHROPIC_API_KEY')).toBeUndefined();
  });

  it('does not take secrets from the development defaults', () => {
    const config = loadConfig(REQUIRED, { OPENAI_API_KEY: 'sk-default' });
    expect(config.readSecret('OPENAI_API_KEY')).toBeUndefined();
  });

  it('keeps the values of load time', () => {
    const source: Record<string, string | undefined> = { ...REQUIRED, OPENAI_API_KEY: 'sk-first' };
    const config = loadConfig(source);
    source['OPENAI_API_KEY'] = 'sk-changed';
    expect(config.readSecret('OPENAI_API_KEY')).toBe('sk-first');
  });
});

describe('Redis selection', () => {
  it('uses one Redis when only REDIS_URL is set, in one queue shard', () => {
    const config = loadConfig(REQUIRED);
    expect(config.redis).toEqual({ kind: 'single', url: REQUIRED.REDIS_URL });
    expect(config.env.QUEUE_SHARDS).toBe(1);
  });

  it('lets REDIS_CLUSTER_NODES win over REDIS_URL, its seeds parsed', () => {
    const config = loadConfig({ ...REQUIRED, REDIS_CLUSTER_NODES: '127.0.0.1:7000,redis-b.internal:7001', QUEUE_SHARDS: '8' });
    expect(config.redis).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: 'redis-b.internal', port: 7001 },
      ],
    });
    expect(config.env.QUEUE_SHARDS).toBe(8);
    expect(loadConfig({ ...REQUIRED, REDIS_URL: undefined, REDIS_CLUSTER_NODES: 'h:1' }).redis).toEqual({ kind: 'cluster', nodes: [{ host: 'h', port: 1 }] });
  });

  it.each(['127.0.0.1', '127.0.0.1:7000,', 'h:port', 'redis://h:7000'])('names REDIS_CLUSTER_NODES when it is not a list of host:port (%s)', (nodes) => {
    expect(configError(() => loadConfig({ ...REQUIRED, REDIS_CLUSTER_NODES: nodes })).message).toMatch(/^Invalid environment variable REDIS_CLUSTER_NODES: /);
  });

  it('refuses no queue shards', () => {
    expect(configError(() => loadConfig({ ...REQUIRED, QUEUE_SHARDS: '0' })).message).toMatch(/^Invalid environment variable QUEUE_SHARDS: /);
  });
});
