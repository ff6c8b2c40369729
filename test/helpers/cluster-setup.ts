/**
 * Global set-up of the `cluster` test project: one Redis Cluster of 3 masters for the whole
 * run, whose seed nodes the suites receive through `inject('redisClusterNodes')`.
 */
import type { TestProject } from 'vitest/node';
import { startRedisCluster } from './redis-cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Seed nodes (`host:port,…`) of the cluster the gateways under test run on; absent outside the cluster project. */
    redisClusterNodes: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startRedisCluster({ masters: 3 });
  project.provide('redisClusterNodes', cluster.nodes);
  return () => cluster.stop();
}
