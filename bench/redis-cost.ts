/**
 * What one completion costs Redis, for this checkout and for a base revision measured in the same
 * run, so that a change to the Redis path is judged by ratios rather than by figures from another
 * machine or another day. Each side gets its own redis-server (its INFO counters then belong to the
 * side alone), a fresh database, one web and one worker process with every feature on (API key,
 * rate limits high enough never to refuse, a budget policy, PII `flag`), and a closed-loop load.
 *
 *   node bench/redis-cost.ts [--base REV|none] [--conns N] [--dur S] [--warm S] [--modes json,sse] [--json]
 *
 * Defaults: --base 4512ad3, --conns 64, --dur 8, --warm 2, --modes json,sse. The base revision runs
 * from a temporary `git worktree` (this checkout's node_modules linked in), removed at the end.
 */
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { BenchStack } from './stack.ts';
import { runClosedLoop } from './closed-loop.ts';
import { costPer, sampleRedis, type RedisSample } from './redis-stats.ts';
import { addWorktree, describeCheckout } from './base-worktree.ts';
import { gatewayHeaders, rateLimitHeader, requestBody, startAllFeaturesStack } from './all-features.ts';
import { CleanupStack, runBench } from './cleanup-stack.ts';
import { sideLogsReport, summariseLogs } from './child-logs.ts';
import { formatReport, toJson, type Mode, type ModeResult, type RunSettings, type SideResult } from './redis-cost-report.ts';
import { settingsOrExit } from './settings-or-exit.ts';

const CHECKOUT = fileURLToPath(new URL('../', import.meta.url));

function readSettings(): RunSettings & { base: string; json: boolean } {
  const { values } = parseArgs({
    options: {
      base: { type: 'string', default: '4512ad3' },
      conns: { type: 'string', default: '64' },
      dur: { type: 'string', default: '8' },
      warm: { type: 'string', default: '2' },
      modes: { type: 'string', default: 'json,sse' },
      json: { type: 'boolean', default: false },
    },
  });
  const bounded = (name: string, raw: string, min: number, max: number) => {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number in [${min}, ${max}]; got ${raw}`);
    return value;
  };
  const modes = values.modes.split(',').map((m) => m.trim());
  if (modes.length === 0 || modes.some((m) => m !== 'json' && m !== 'sse')) throw new Error(`--modes must be json and/or sse; got ${values.modes}`);
  const connections = bounded('conns', values.conns, 1, 512);
  if (!Number.isInteger(connections)) throw new Error('--conns must be an integer');
  return {
    base: values.base,
    json: values.json,
    connections,
    durS: bounded('dur', values.dur, 1, 120),
    warmS: bounded('warm', values.warm, 0, 60),
    modes: modes as Mode[],
  };
}

const USAGE = 'usage: node bench/redis-cost.ts [--base REV|none] [--conns N] [--dur S] [--warm S] [--modes json,sse] [--json]';

const settings = settingsOrExit(readSettings, USAGE);
// Per side: a private Redis and the stack's start (each bounded), the modes, and the clean-up.
const budgetMs = (30 + (settings.base === 'none' ? 1 : 2) * (90 + settings.modes.length * (settings.warmS + settings.durS + 20))) * 1000;

// What to undo, last first; a side unwinds its own entries when it ends, the watchdog everything.
const cleanups = new CleanupStack('redis-cost');

async function measureMode(stack: BenchStack, monitor: Redis, mode: Mode, name: string): Promise<ModeResult> {
  process.stderr.write(`  ${name} ${mode} ×${settings.connections} … `);
  const run = await runClosedLoop<RedisSample>({
    url: `${stack.gatewayUrl}/chat/completions`,
    headers: gatewayHeaders(stack),
    body: requestBody(mode === 'sse'),
    stream: mode === 'sse',
    connections: settings.connections,
    warmS: settings.warmS,
    durS: settings.durS,
    probe: () => sampleRedis(monitor),
  });
  const redis = costPer(run.before, run.after, run.completed);
  const result = {
    completed: run.completed,
    windowS: run.windowS,
    perSecond: run.completed / run.windowS,
    errors: run.errors,
    firstError: run.firstError,
    redis,
  };
  process.stderr.write(
    `${result.perSecond.toFixed(0)}/s, ${redis.commands.toFixed(1)} commands, ${redis.scriptCalls.toFixed(2)} scripts, ${redis.cpuUs.toFixed(0)} µs Redis CPU, ${run.errors} errors\n`,
  );
  return result;
}

/** Starts a private Redis and the stack from `root` (this checkout when undefined), loads every mode, stops both. */
async function measureSide(role: SideResult['role'], label: string, root: string | undefined): Promise<{ side: SideResult; logs: string }> {
  return cleanups.scope(async () => {
    process.stderr.write(`${role} ${label}: starting a private Redis, upstream, database, web and worker…\n`);
    const { redisServer, stack } = await startAllFeaturesStack(cleanups, { root, connections: settings.connections });
    const monitor = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    cleanups.register(async () => monitor.disconnect());
    const side: SideResult = { role, label, modes: {}, rateLimitHeader: await rateLimitHeader(stack) };
    for (const mode of settings.modes) side.modes[mode] = await measureMode(stack, monitor, mode, role);
    const { web, workers } = stack.processes;
    return { side, logs: summariseLogs([web, ...workers].map((p) => p.output()).join('\n')) };
  });
}

async function main(): Promise<number> {
  process.stderr.write(`redis-cost: bounded to ${Math.round(budgetMs / 1000)} s\n`);
  const disarm = cleanups.guard(budgetMs);
  const measured: Array<{ side: SideResult; logs: string }> = [];
  try {
    const label = await describeCheckout(CHECKOUT);
    if (settings.base !== 'none') {
      await cleanups.scope(async () => {
        const worktree = await addWorktree(CHECKOUT, settings.base);
        cleanups.register(() => worktree.remove());
        measured.push(await measureSide('base', worktree.commit.slice(0, 7), worktree.root));
      });
    }
    measured.push(await measureSide('this', label, undefined));
  } finally {
    disarm();
    await cleanups.unwind();
  }
  const sides = measured.map((m) => m.side);
  process.stdout.write(`\n${formatReport(settings, sides)}\n`);
  if (settings.json) process.stdout.write(`${JSON.stringify(toJson(settings, sides))}\n`);
  process.stdout.write(sideLogsReport(measured));
  const errors = sides.reduce((sum, side) => sum + Object.values(side.modes).reduce((n, r) => n + r.errors, 0), 0);
  return errors === 0 ? 0 : 1;
}

runBench('redis-cost', cleanups, main);
