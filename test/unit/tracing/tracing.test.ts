/** When a process traces: only with an OTLP endpoint, and never when the SDK is disabled. */
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { loadConfig } from '../../../src/config.ts';
import { startTracing, tracingConfigured, TRACING_OFF } from '../../../src/infra/tracing/tracing.ts';

const REQUIRED = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1:5432/gw', CATALOG: 'catalog/dev.yaml' };
const envOf = (extra: Record<string, string>) => loadConfig({ ...REQUIRED, ...extra }).env;

describe('tracingConfigured', () => {
  it('is off by default, on with either OTLP endpoint, and off again when the SDK is disabled', () => {
    expect(tracingConfigured(envOf({}))).toBe(false);
    expect(tracingConfigured(envOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }))).toBe(true);
    expect(tracingConfigured(envOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }))).toBe(true);
    expect(tracingConfigured(envOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }))).toBe(false);
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    expect(() => envOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});

describe('startTracing', () => {
  it('starts nothing without an endpoint', async () => {
    expect(await startTracing(envOf({}), 'llm-gateway-web', pino({ level: 'silent' }))).toBe(TRACING_OFF);
    expect(TRACING_OFF.enabled).toBe(false);
  });
});
