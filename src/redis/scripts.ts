import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** The Lua scripts of src/redis/scripts/, as `<name>-<numberOfKeys>.lua`. */
const SCRIPTS = {
  publishEvents: 'publish-events-1.lua',
  outboxTake: 'outbox-take-2.lua',
  outboxRelease: 'outbox-release-2.lua',
} as const;

type ScriptName = keyof typeof SCRIPTS;

/** An ioredis client with the gateway's scripts defined on it. */
export type ScriptedRedis = Redis & Record<ScriptName, (...args: Array<string | number>) => Promise<unknown>>;

/** Defines every script on the client (EVALSHA with EVAL fallback, done by ioredis). */
export function defineScripts(redis: Redis): ScriptedRedis {
  for (const [name, file] of Object.entries(SCRIPTS)) {
    if (name in redis) continue;
    const numberOfKeys = Number(/-(\d+)\.lua$/.exec(file)?.[1]);
    const lua = readFileSync(new URL(`./scripts/${file}`, import.meta.url), 'utf8');
    redis.defineCommand(name, { numberOfKeys, lua });
  }
  return redis as ScriptedRedis;
}

/** One event to append and publish: its sequence number and its line (`<type> <payload>`). */
export interface EventLine {
  seq: number;
  line: string;
}

/** Appends events to the request's stream and publishes them to the reply channel, atomically. */
export async function publishEvents(
  redis: ScriptedRedis,
  streamKey: string,
  channel: string,
  ttlMs: number,
  requestId: string,
  events: readonly EventLine[],
): Promise<void> {
  const args: Array<string | number> = [streamKey, channel, ttlMs, requestId];
  for (const event of events) args.push(event.seq, event.line);
  await redis.publishEvents(...args);
}

/** Leases up to `max` outbox records (expired leases first); oldest first. */
export async function outboxTake(redis: ScriptedRedis, itemsKey: string, leasesKey: string, max: number, now: number, leaseMs: number): Promise<string[]> {
  return (await redis.outboxTake(itemsKey, leasesKey, max, now, leaseMs)) as string[];
}

/** Returns leased records to the outbox after a failed write. */
export async function outboxRelease(redis: ScriptedRedis, itemsKey: string, leasesKey: string, records: readonly string[]): Promise<void> {
  if (records.length > 0) await redis.outboxRelease(itemsKey, leasesKey, ...records);
}
