/**
 * What a Redis server did between two instants, per unit of work: one `INFO stats cpu commandstats`
 * call reads every counter at once (Redis answers it atomically), and two such samples are diffed.
 */
import type { Redis } from 'ioredis';

/** Calls of one command and the µs Redis spent in them. */
export interface CommandCounter {
  calls: number;
  usec: number;
}

/** Redis's counters at one instant. */
export interface RedisSample {
  /** `total_commands_processed`: every command, those run inside scripts included. */
  totalCommands: number;
  /** `used_cpu_sys` + `used_cpu_user`: the whole process, background threads included. */
  cpuSeconds: number;
  /** `INFO commandstats` by command name (`client|setname` for subcommands). */
  commands: Map<string, CommandCounter>;
}

/** One command's share of a unit of work. */
export interface CommandCost {
  command: string;
  calls: number;
  usPerCall: number;
}

/** Redis's work per unit (e.g. per completion) between two samples. */
export interface RedisCost {
  commands: number;
  /** EVALSHA, EVAL and FCALL calls (their read-only variants included). */
  scriptCalls: number;
  cpuUs: number;
  /** Units per second one Redis core could serve at that CPU cost. */
  ceilingPerS: number;
  /** Every command that ran, most calls first. */
  byCommand: CommandCost[];
}

const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'fcall', 'evalsha_ro', 'eval_ro', 'fcall_ro']);

/** Parses `INFO commandstats` lines (`cmdstat_<name>:calls=N,usec=N,…`). */
export function parseCommandStats(info: string): Map<string, CommandCounter> {
  const commands = new Map<string, CommandCounter>();
  for (const [, name, calls, usec] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    commands.set(name as string, { calls: Number(calls), usec: Number(usec) });
  }
  return commands;
}

function field(info: string, name: string): number {
  const match = new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info);
  if (!match) throw new Error(`INFO has no ${name}`);
  return Number(match[1]);
}

/** Reads the counters in one INFO call. */
export async function sampleRedis(redis: Redis): Promise<RedisSample> {
  const info = await redis.info('stats', 'cpu', 'commandstats');
  return {
    totalCommands: field(info, 'total_commands_processed'),
    cpuSeconds: field(info, 'used_cpu_sys') + field(info, 'used_cpu_user'),
    commands: parseCommandStats(info),
  };
}

/** Work per unit between two samples; the INFO call that took `before` (counted in `after`) is left out. */
export function costPer(before: RedisSample, after: RedisSample, units: number): RedisCost {
  const byCommand: CommandCost[] = [];
  let infoCalls = 0;
  let scriptCalls = 0;
  for (const [command, end] of after.commands) {
    const start = before.commands.get(command) ?? { calls: 0, usec: 0 };
    const calls = end.calls - start.calls;
    if (command === 'info') infoCalls = calls;
    if (calls <= 0 || command === 'info') continue;
    if (SCRIPT_COMMANDS.has(command)) scriptCalls += calls;
    byCommand.push({ command, calls: calls / units, usPerCall: (end.usec - start.usec) / calls });
  }
  byCommand.sort((a, b) => b.calls - a.calls);
  const cpuUs = ((after.cpuSeconds - before.cpuSeconds) * 1e6) / units;
  return {
    commands: (after.totalCommands - before.totalCommands - infoCalls) / units,
    scriptCalls: scriptCalls / units,
    cpuUs,
    ceilingPerS: 1e6 / cpuUs,
    byCommand,
  };
}

/**
 * The pid of the redis-server behind `url` (its `INFO server` process_id), when it runs on this
 * machine; null when it cannot be asked. Several servers may run here: the name alone does not say which.
 */
export async function readRedisPid(url: string): Promise<number | null> {
  const { Redis: Client } = await import('ioredis');
  const client = new Client(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const match = /^process_id:(\d+)/m.exec(await client.info('server'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  } finally {
    client.disconnect();
  }
}
