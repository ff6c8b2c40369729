import { describe, expect, it } from 'vitest';
import { BYPASS, planCaching, readCacheControl } from '../../../src/domain/cache/cache-directives.ts';
import { MAX_CACHE_TTL_S } from '../../../src/domain/cache/cache-policy-admin.ts';
import { GatewayError } from '../../../src/errors/gateway-error.ts';

const ON = { enabled: true, defaultTtlS: 300, maxBytes: 1 << 20 };
const DETERMINISTIC = { cacheable: true, samples: false, idempotent: false };

describe('readCacheControl', () => {
  it('reads max-age (quoted or not), no-cache and no-store, case-insensitively, and ignores the rest', () => {
    expect(readCacheControl(undefined)).toBeNull();
    expect(readCacheControl('max-age=60')).toEqual({ maxAge: 60, noCache: false, noStore: false });
    expect(readCacheControl('Max-Age="5", No-Cache')).toEqual({ maxAge: 5, noCache: true, noStore: false });
    expect(readCacheControl(['no-store', 'private, must-revalidate'])).toEqual({ maxAge: null, noCache: false, noStore: true });
    expect(readCacheControl(`max-age=${MAX_CACHE_TTL_S * 10}`)?.maxAge).toBe(MAX_CACHE_TTL_S);
  });

  it.each(['max-age=soon', 'max-age=-1', 'max-age', 'max-age=1.5'])('refuses %s naming Cache-Control', (header) => {
    expect(() => readCacheControl(header)).toThrow(GatewayError);
    expect(() => readCacheControl(header)).toThrow(expect.objectContaining({ status: 400, param: 'Cache-Control' }));
  });
});

describe('planCaching', () => {
  it('reads and stores for the default TTL without a header, and for max-age with one', () => {
    expect(planCaching(ON, null, DETERMINISTIC)).toEqual({ status: 'miss', readMaxAgeS: 300, storeTtlS: 300 });
    expect(planCaching(ON, readCacheControl('max-age=20'), DETERMINISTIC)).toEqual({ status: 'miss', readMaxAgeS: 20, storeTtlS: 20 });
  });

  it('stores without reading for no-cache and for an idempotent request; no-store and max-age=0 bypass', () => {
    expect(planCaching(ON, readCacheControl('no-cache'), DETERMINISTIC)).toEqual({ status: 'refresh', readMaxAgeS: null, storeTtlS: 300 });
    expect(planCaching(ON, null, { ...DETERMINISTIC, idempotent: true })).toEqual({ status: 'refresh', readMaxAgeS: null, storeTtlS: 300 });
    expect(planCaching(ON, readCacheControl('no-store, max-age=60'), DETERMINISTIC)).toBe(BYPASS);
    expect(planCaching(ON, readCacheControl('max-age=0'), DETERMINISTIC)).toBe(BYPASS);
  });

  it('caches a sampling request only when its Cache-Control asks', () => {
    const samples = { ...DETERMINISTIC, samples: true };
    expect(planCaching(ON, null, samples)).toBe(BYPASS);
    expect(planCaching(ON, readCacheControl('private'), samples)).toBe(BYPASS);
    expect(planCaching(ON, readCacheControl('max-age=10'), samples).status).toBe('miss');
    expect(planCaching(ON, readCacheControl('no-cache'), samples).status).toBe('refresh');
  });

  it('bypasses a tenant without caching and an operation the cache does not hold, whatever is asked', () => {
    expect(planCaching({ ...ON, enabled: false }, readCacheControl('max-age=60'), DETERMINISTIC)).toBe(BYPASS);
    expect(planCaching(ON, readCacheControl('max-age=60'), { ...DETERMINISTIC, cacheable: false })).toBe(BYPASS);
  });
});
