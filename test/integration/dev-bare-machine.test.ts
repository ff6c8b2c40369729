/**
 * `npm run dev` on a machine with only Node and redis-server: no PostgreSQL and no Redis answer
 * at dev's defaults (PGPORT and REDIS_URL point at closed loopback ports), so dev runs on its
 * embedded PostgreSQL and a private redis-server, keeps its data across a restart, and stops
 * the redis-server when it ends.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.ts';
import { spawnEntry, stopProcess, type GatewayProcess } from '../helpers/gateway-processes.ts';

const DEV_ENTRY = new URL('../../src/dev.ts', import.meta.url).pathname;

let workdir: string;
let bare: Record<string, string>;
const started: GatewayProcess[] = [];

beforeAll(async () => {
  workdir = await mkdtemp(join(tmpdir(), 'gw-dev-'));
  bare = { PGPORT: String(await freePort()), REDIS_URL: `redis://127.0.0.1:${await freePort()}`, PORT: String(await freePort()) };
});

afterEach(async () => {
  await Promise.all(started.splice(0).map(stopProcess));
});

afterAll(async () => {
  await rm(workdir, { recursive: true, force: true });
});

/** Runs `node src/dev.ts` in the work directory, as a newcomer runs `npm run dev` in a checkout. */
function startDev(env: Record<string, string>): GatewayProcess {
  const dev = spawnEntry(DEV_ENTRY, env, workdir);
  started.push(dev);
  return dev;
}

async function printed(dev: GatewayProcess, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(dev.output());
    if (match) return match;
    if (dev.child.exitCode !== null) throw new Error(`dev exited (${dev.child.exitCode}) before printing ${pattern}:\n${dev.output()}`);
    if (Date.now() > deadline) throw new Error(`dev did not print ${pattern} within ${timeoutMs} ms:\n${dev.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether `pid` still runs; a zombie (ended, not yet reaped by whoever adopted it) does not. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = (() => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return ''; // not Linux
    }
  })();
  return !/^\d+ \(.*\) Z/.test(stat);
}

/** Waits a little for `pid` to end: a private Redis stopped from an exit hook is signalled, not waited for. */
async function ended(pid: number, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (running(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Starts dev and waits for its key; returns the key and the pid of its private redis-server. */
async function devUp(): Promise<{ dev: GatewayProcess; key: string; redisPid: number }> {
  const dev = startDev(bare);
  const [, key] = await printed(dev, /role developer\): (gwk_\S+)/);
  const [, pid] = await printed(dev, /^Redis: private redis-server \(pid (\d+)\)/m);
  expect(dev.output()).toMatch(/^Store: embedded PostgreSQL \(PGlite\) on postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres, data in .*\.gateway-dev\/pgdata/m);
  return { dev, key: key as string, redisPid: Number(pid) };
}

async function complete(key: string): Promise<string> {
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${bare.PORT}/v1`, apiKey: key, maxRetries: 0 });
  const completion = await client.chat.completions.create({ model: 'svc-flash', messages: [{ role: 'user', content: 'Hello!' }] });
  return completion.choices[0]?.message.content ?? '';
}

async function devDown(dev: GatewayProcess, redisPid: number): Promise<void> {
  dev.child.kill('SIGTERM');
  expect(await dev.exited).toBe(0);
  expect(running(redisPid)).toBe(false);
}

describe('npm run dev with neither PostgreSQL nor Redis running', () => {
  // Two starts, the first creating the database (initdb): a few seconds each on a loaded machine.
  it('serves a completion on PGlite and a private Redis, keeps its keys across a restart, and stops that Redis on SIGTERM', { timeout: 60_000 }, async () => {
    const first = await devUp();
    expect(await complete(first.key)).not.toBe('');
    await devDown(first.dev, first.redisPid);

    const second = await devUp();
    expect(second.redisPid).not.toBe(first.redisPid);
    expect(await complete(first.key)).not.toBe('');
    await devDown(second.dev, second.redisPid);
  });

  it('stops its private Redis when it cannot start, and says what is wrong with the store it was given', async () => {
    const dev = startDev({ ...bare, DATABASE_URL: `postgres://postgres@127.0.0.1:${bare.PGPORT}/gateway_dev_given` });
    const [, pid] = await printed(dev, /^Redis: private redis-server \(pid (\d+)\)/m);
    expect(await dev.exited).toBe(1);
    expect(dev.output()).toMatch(/^dev: cannot use the PostgreSQL of DATABASE_URL \(postgres:\/\/postgres@127\.0\.0\.1:\d+\/gateway_dev_given\): .+\.$/m);
    expect(dev.output()).toMatch(/^dev: .*unset DATABASE_URL to run on the embedded PostgreSQL/m);
    expect(await ended(Number(pid))).toBe(true);
  });

  it('says what is missing and how to get it when redis-server is not on the PATH', async () => {
    // node is run by its absolute path (spawnEntry uses process.execPath); the PATH holds nothing at all.
    const dev = startDev({ ...bare, PATH: workdir });
    expect(await dev.exited).toBe(1);
    const lines = dev.output().trim().split('\n');
    expect(lines).toEqual([
      `dev: no Redis listens at ${bare.REDIS_URL}, and redis-server is not on the PATH to start a private one.`,
      expect.stringMatching(/^dev: Install Redis 7 or newer \(.*apt-get install redis-server.*brew install redis\), or set REDIS_URL to a running Redis\.$/),
    ]);
  });
});
