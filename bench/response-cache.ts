/**
 * The response cache's price and worth, on one stack, interleaved: rounds of three
 * closed-loop windows of JSON chat completions, each request's order changing per round.
 *
 *   bypass  a new body each request with `Cache-Control: no-store`: no look-up, no store, the path of a
 *           tenant without caching
 *   refresh a new body each request with `Cache-Control: no-cache`: no look-up, the worker's store
 *   miss    a new body each request, cached by the tenant's default: one look-up (a miss) on the web,
 *           one store on the worker after the answer; against refresh, the look-up's own cost
 *   hit     the same body every time: served by the web from Redis, no job
 *
 * It prints completions per second of each, the look-up's cost (miss against refresh: the target is
 * under 3 %), the store's (refresh against bypass), and the hit's throughput against the miss's.
 *
 *   node bench/response-cache.ts [--conns N] [--dur S] [--warm S] [--rounds R]
 */
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { BENCH_MODEL, startStack } from './stack.ts';
import { runClosedLoop } from './closed-loop.ts';
import { CleanupStack, runBench } from './cleanup-stack.ts';
import { num, table } from './report-format.ts';
import { settingsOrExit } from './settings-or-exit.ts';

const MODES = ['bypass', 'refresh', 'miss', 'hit'] as const;
type Mode = (typeof MODES)[number];

function readSettings() {
  const { values } = parseArgs({
    options: {
      conns: { type: 'string', default: '32' },
      dur: { type: 'string', default: '6' },
      warm: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const bounded = (name: string, raw: string, min: number, max: number) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be an integer in [${min}, ${max}]; got ${raw}`);
    return value;
  };
  return {
    connections: bounded('conns', values.conns, 1, 512),
    durS: bounded('dur', values.dur, 1, 120),
    warmS: bounded('warm', values.warm, 0, 60),
    rounds: bounded('rounds', values.rounds, 1, 20),
  };
}

const settings = settingsOrExit(readSettings, 'usage: node bench/response-cache.ts [--conns N] [--dur S] [--warm S] [--rounds R]');
const cleanups = new CleanupStack('response-cache');

const requestBody = (content: string) => JSON.stringify({ model: BENCH_MODEL, temperature: 0, messages: [{ role: 'user', content }] });

runBench('response-cache', cleanups, async () => {
  const stack = await startStack({
    redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
    workers: 1,
    workerConcurrency: settings.connections * 2,
    upstreamConnections: settings.connections * 2,
    nodeOptions: { web: '', worker: '' },
    env: { TENANT_RPM: '0', TENANT_TPM: '0', KEY_RPM: '0', KEY_TPM: '0' },
    prepareTenant: async (repository, tenantId) => {
      await repository.policies.setCache({ tenantId, enabled: true, defaultTtlS: 60, maxBytes: 256 * 1024 * 1024 });
    },
  });
  cleanups.register(() => stack.close());
  const url = `${stack.gatewayUrl}/chat/completions`;
  const headers = { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' };
  const hitBody = requestBody('the one question everybody asks');
  const loads: Record<Mode, { headers: Record<string, string>; body: string | (() => string) }> = {
    bypass: { headers: { ...headers, 'cache-control': 'no-store' }, body: () => requestBody(randomUUID()) },
    refresh: { headers: { ...headers, 'cache-control': 'no-cache' }, body: () => requestBody(randomUUID()) },
    miss: { headers, body: () => requestBody(randomUUID()) },
    hit: { headers, body: hitBody },
  };
  const rates: Record<Mode, number[]> = { bypass: [], refresh: [], miss: [], hit: [] };
  const errors: Record<Mode, number> = { bypass: 0, refresh: 0, miss: 0, hit: 0 };
  for (let round = 0; round < settings.rounds; round++) {
    for (let i = 0; i < MODES.length; i++) {
      const mode = MODES[(round + i) % MODES.length] as Mode;
      process.stderr.write(`round ${round + 1}: ${mode} … `);
      const result = await runClosedLoop({
        url,
        ...loads[mode],
        stream: false,
        connections: settings.connections,
        warmS: settings.warmS,
        durS: settings.durS,
        probe: async () => undefined,
      });
      if (result.firstError) throw new Error(`${mode}: ${result.firstError}`);
      errors[mode] += result.errors;
      rates[mode].push(result.completed / result.windowS);
      process.stderr.write(`${num(result.completed / result.windowS, 0)}/s\n`);
    }
  }
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const rows = MODES.map((mode) => [mode, num(mean(rates[mode]), 0), rates[mode].map((rate) => num(rate, 0)).join(' '), String(errors[mode])]);
  console.log(`JSON completions, ${settings.connections} connections, ${settings.rounds} interleaved rounds of ${settings.durS} s each`);
  console.log(table(['mode', 'completions/s (mean)', 'per round', 'errors'], rows));
  const bypass = mean(rates.bypass);
  const refresh = mean(rates.refresh);
  const miss = mean(rates.miss);
  const fewer = (from: number, to: number) => `${num(((from - to) / from) * 100, 1)} % fewer completions/s`;
  console.log(`the look-up (miss against refresh): ${fewer(refresh, miss)} (target: under 3 %)`);
  console.log(`the store (refresh against bypass): ${fewer(bypass, refresh)}`);
  console.log(`hit against miss: ${num(mean(rates.hit) / miss, 2)}x the completions/s`);
  return 0;
});
