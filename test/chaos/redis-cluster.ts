/**
 * The campaign's Redis Cluster: 3 masters, each with a replica, on loopback, every node with an
 * append-only file, formed by `redis-cli --cluster create --cluster-replicas 1` (test/helpers/redis-cluster.ts
 * forms masters alone; a failover needs replicas). Two faults: a manual failover (CLUSTER FAILOVER on a
 * replica: the roles swap with no write lost) and a killed master (SIGKILL: its replica is promoted after
 * the node timeout, writes not yet replicated are lost; the old master comes back as a replica).
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.ts';
import { endRedisProcess, ping, redisArgs, startRedisProcess } from './redis-server.ts';

/** A running cluster. */
export interface ChaosCluster {
  /** Every node as `127.0.0.1:PORT`, comma-separated (the gateway's seed list). */
  nodes: string;
  /** CLUSTER FAILOVER on a replica of the master `pick` chooses; resolves with what happened, once the cluster is ok. */
  manualFailover(pick: (masters: number[]) => number): Promise<string>;
  /** SIGKILLs the master `pick` chooses, waits for its replica's promotion, restarts it after `downMs`; resolves with what happened. */
  killMaster(pick: (masters: number[]) => number, downMs: number): Promise<string>;
  stop(): Promise<void>;
}

interface Node {
  port: number;
  busPort: number;
  dir: string;
  child: ChildProcess | null;
}

interface NodeInfo {
  port: number;
  id: string;
  master: boolean;
  failed: boolean;
  masterId: string | null;
}

const NODE_TIMEOUT_MS = 2_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function redisCli(args: string[], timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve) => execFile('redis-cli', args, { timeout: timeoutMs }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`.trim())));
}

function argsOf(node: Node): string[] {
  return redisArgs(node.port, node.dir, [
    '--cluster-enabled',
    'yes',
    '--cluster-port',
    String(node.busPort),
    '--cluster-config-file',
    join(node.dir, 'nodes.conf'),
    '--cluster-node-timeout',
    String(NODE_TIMEOUT_MS),
    // A replica may always be promoted, however long since it heard its master.
    '--cluster-replica-validity-factor',
    '0',
  ]);
}

/** CLUSTER NODES as one live node sees it. */
async function topology(nodes: Node[]): Promise<NodeInfo[]> {
  for (const node of nodes) {
    if (!node.child || (await ping(node.port)) !== 'PONG') continue;
    const text = await redisCli(['-p', String(node.port), 'cluster', 'nodes']);
    return text
      .split('\n')
      .filter((line) => line.includes('@'))
      .map((line) => {
        const [id, address, flags, masterId] = line.split(' ');
        return {
          id: id as string,
          port: Number((address as string).split('@')[0]?.split(':')[1]),
          master: (flags as string).includes('master'),
          failed: (flags as string).includes('fail'),
          masterId: masterId === '-' ? null : (masterId ?? null),
        };
      });
  }
  return [];
}

/** Every live node says cluster_state:ok with all slots served. */
async function clusterOk(nodes: Node[]): Promise<boolean> {
  for (const node of nodes.filter((n) => n.child)) {
    const info = await redisCli(['-p', String(node.port), 'cluster', 'info']);
    if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384')) return false;
  }
  return true;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Live masters' ports, in port order. */
async function masters(nodes: Node[]): Promise<NodeInfo[]> {
  return (await topology(nodes)).filter((n) => n.master && !n.failed).sort((a, b) => a.port - b.port);
}

/** Starts 6 nodes and forms 3 masters with a replica each. */
export async function startChaosCluster(): Promise<ChaosCluster> {
  const nodes: Node[] = [];
  const used = new Set<number>();
  const port = async () => {
    let found = await freePort();
    while (used.has(found)) found = await freePort();
    used.add(found);
    return found;
  };
  try {
    for (let i = 0; i < 6; i++) nodes.push({ port: await port(), busPort: await port(), dir: await mkdtemp(join(tmpdir(), 'chaos-cluster-')), child: null });
    for (const node of nodes) node.child = await startRedisProcess(node.port, argsOf(node));
    const created = await redisCli(['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], 60_000);
    await waitUntil(() => clusterOk(nodes), 30_000, `ok after create (${created.split('\n').slice(-3).join(' ')})`);
    await waitUntil(async () => (await topology(nodes)).filter((n) => !n.master && n.masterId).length === 3, 30_000, 'three replicas attached');
  } catch (error) {
    await Promise.all(nodes.map((n) => (n.child ? endRedisProcess(n.child, 'SIGKILL') : Promise.resolve())));
    throw error;
  }
  const byPort = (p: number): Node | undefined => nodes.find((n) => n.port === p);
  const replicaOf = async (master: NodeInfo) => (await topology(nodes)).find((n) => n.masterId === master.id && !n.failed && byPort(n.port)?.child);
  const choose = async (pick: (ports: number[]) => number) => {
    const live = await masters(nodes);
    const chosen = live[pick(live.map((m) => m.port))] ?? live[0];
    if (!chosen) throw new Error('Redis Cluster: no live master');
    return chosen;
  };
  return {
    nodes: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    async manualFailover(pick) {
      const master = await choose(pick);
      const replica = await replicaOf(master);
      if (!replica) return `master ${master.port} has no live replica: no failover`;
      await redisCli(['-p', String(replica.port), 'cluster', 'failover']);
      await waitUntil(async () => (await masters(nodes)).some((m) => m.port === replica.port), 15_000, `replica ${replica.port} promoted`);
      await waitUntil(() => clusterOk(nodes), 30_000, 'ok after the manual failover');
      return `replica ${replica.port} took over from master ${master.port}`;
    },
    async killMaster(pick, downMs) {
      const master = await choose(pick);
      const replica = await replicaOf(master);
      const node = byPort(master.port) as Node;
      if (node.child) await endRedisProcess(node.child, 'SIGKILL');
      node.child = null;
      const started = Date.now();
      if (replica) await waitUntil(async () => (await masters(nodes)).some((m) => m.port === replica.port), 20_000, `replica ${replica.port} promoted`);
      const promotedMs = Date.now() - started;
      await sleep(Math.max(0, downMs - promotedMs));
      node.child = await startRedisProcess(node.port, argsOf(node));
      await waitUntil(() => clusterOk(nodes), 30_000, `ok after master ${master.port} came back`);
      return `master ${master.port} killed, replica ${replica?.port ?? 'none'} promoted after ${promotedMs} ms, old master back as a replica`;
    },
    async stop() {
      await Promise.all(nodes.map((n) => (n.child ? endRedisProcess(n.child, 'SIGKILL') : Promise.resolve())));
      await Promise.all(nodes.map((n) => rm(n.dir, { recursive: true, force: true })));
    },
  };
}
