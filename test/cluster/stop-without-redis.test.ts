/**
 * A process told to stop ends within SHUTDOWN_GRACE_MS plus a few seconds, whatever Redis does.
 * Every master of the cluster shuts down right after the SIGTERM (a whole deployment going down
 * at once), or is already gone when it comes: a worker once waited for ever on its blocking
 * command, which ioredis retries while a cluster has no master, logging "Connection is closed.".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayProcess, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

const GRACE_MS = 1_000;
/** What a stop may take past the grace period (the processes' own margin is 5 s). */
const STOP_MARGIN_MS = 6_000;
/** How long the test waits for an exit before it calls the process hung. */
const HUNG_AFTER_MS = GRACE_MS + STOP_MARGIN_MS + 5_000;

let cluster: RedisCluster | undefined;
let upstream: FakeUpstream | undefined;
let gateway: GatewayUnderTest | undefined;

async function startOnCluster(): Promise<GatewayUnderTest> {
  cluster = await startRedisCluster({ masters: 3 });
  upstream = await startFakeUpstream();
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    clusterNodes: cluster.nodes,
    env: { SHUTDOWN_GRACE_MS: String(GRACE_MS), QUEUE_SHARDS: '3' },
  });
  return gateway;
}

afterEach(async () => {
  // The masters are gone, and their keys with them.
  await gateway?.abandon();
  await upstream?.close();
  await cluster?.stop();
  gateway = upstream = cluster = undefined;
});

/** SHUTDOWN NOSAVE to every master, as an operator stopping them does. */
async function shutDownMasters(ports: number[]): Promise<void> {
  await Promise.all(ports.map((port) => promisify(execFile)('redis-cli', ['-p', String(port), 'shutdown', 'nosave']).catch(() => undefined)));
}

/** Resolves with how `proc` ended and how long after `since` it did, or 'hung'. */
async function exitOf(proc: GatewayProcess, since: number): Promise<{ exit: number | string; ms: number }> {
  const hung = new Promise<string>((resolve) => setTimeout(() => resolve('hung'), HUNG_AFTER_MS).unref());
  const exit = await Promise.race([proc.exited, hung]);
  return { exit, ms: Date.now() - since };
}

function expectStoppedInTime(proc: GatewayProcess, { exit, ms }: { exit: number | string; ms: number }): void {
  expect(exit, `still running ${HUNG_AFTER_MS} ms after SIGTERM:\n${proc.output().slice(-3000)}`).not.toBe('hung');
  expect(ms).toBeLessThan(GRACE_MS + STOP_MARGIN_MS);
}

describe('stopping while no Redis Cluster master answers', () => {
  it('an idle worker whose masters shut down right after its SIGTERM exits in time', async () => {
    const { workers } = await startOnCluster();
    const worker = workers[0] as GatewayProcess;
    const since = Date.now();
    worker.child.kill('SIGTERM');
    await shutDownMasters((cluster as RedisCluster).ports);
    expectStoppedInTime(worker, await exitOf(worker, since));
  }, 60_000);

  it('an idle worker whose masters are already gone exits in time', async () => {
    const { workers } = await startOnCluster();
    const worker = workers[0] as GatewayProcess;
    await shutDownMasters((cluster as RedisCluster).ports);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const since = Date.now();
    worker.child.kill('SIGTERM');
    expectStoppedInTime(worker, await exitOf(worker, since));
  }, 60_000);

  it('a web process whose masters are already gone exits in time', async () => {
    const { web } = await startOnCluster();
    await shutDownMasters((cluster as RedisCluster).ports);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const since = Date.now();
    web.child.kill('SIGTERM');
    expectStoppedInTime(web, await exitOf(web, since));
  }, 60_000);
});
