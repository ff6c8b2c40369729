/**
 * A Redis Cluster of a suite's own: masters without replicas on loopback ports, each a
 * `redis-server` child process of this one, formed with `redis-cli --cluster create`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

/** A running cluster, stopped by `stop()`. */
export interface RedisCluster {
  /** Every master as `127.0.0.1:PORT`, comma-separated, in the order of `ports`. */
  nodes: string;
  ports: number[];
  /** SIGKILLs master `index`, starts it again on its port with its directory (nodes.conf, and the append-only file with persistence), and resolves once the cluster is ok. */
  restart(index: number): Promise<void>;
  /** Kills every node and removes their directories. */
  stop(): Promise<void>;
}

interface ClusterNode {
  port: number;
  /** The cluster bus port, chosen rather than Redis' default of port + 10000, which is over 65535 for most ephemeral ports. */
  busPort: number;
  dir: string;
  /** Append-only file fsynced on every write, so that a restart loses nothing. */
  persistence: boolean;
  child: ChildProcess | null;
}

const SLOTS = 16_384;
const NODE_START_MS = 10_000;
const CLUSTER_OK_MS = 30_000;
const POLL_MS = 100;
const INSTALL_HINT = 'install redis-server (and redis-tools for redis-cli), 7.0 or newer: apt-get install redis-server redis-tools';

/** Runs redis-cli and returns its exit code and output, whatever the code. */
function redisCli(args: string[], timeoutMs = 5_000): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') reject(new Error(`redis-cli is not on the PATH: ${INSTALL_HINT}`));
      else resolve({ code: error ? Number(error.code ?? 1) || 1 : 0, output: `${stdout}${stderr}`.trim() });
    });
  });
}

async function requireBinaries(): Promise<void> {
  for (const binary of ['redis-server', 'redis-cli']) {
    await new Promise<void>((resolve, reject) => {
      execFile(binary, ['--version'], (error) => (error ? reject(new Error(`${binary} is not usable (${error.message}): ${INSTALL_HINT}`)) : resolve()));
    });
  }
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, failure: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(await failure());
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function logTail(node: ClusterNode): Promise<string> {
  const log = await readFile(join(node.dir, 'redis.log'), 'utf8').catch(() => '');
  return log.split('\n').slice(-10).join('\n');
}

async function startNode(node: ClusterNode): Promise<void> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(node.port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-port',
      String(node.busPort),
      '--cluster-config-file',
      join(node.dir, 'nodes.conf'),
      '--cluster-node-timeout',
      '2000',
      '--save',
      '',
      ...(node.persistence ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
      '--maxmemory-policy',
      'noeviction',
      '--dir',
      node.dir,
      '--logfile',
      join(node.dir, 'redis.log'),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  node.child = child;
  // Errors in the arguments (an old redis-server) go to stderr before the log file is opened.
  let stderr = '';
  child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
  // Set by the listeners below, which control-flow analysis does not follow: without the cast it stays `null` to the checker.
  let ended = null as string | null;
  child.once('error', (error) => (ended = `cannot start redis-server (${error.message}): ${INSTALL_HINT}`));
  child.once('exit', (code, signal) => (ended ??= `redis-server on port ${node.port} exited with ${code ?? signal}`));
  const answers = async () => ended !== null || (await redisCli(['-p', String(node.port), 'ping'])).output === 'PONG';
  await waitFor(answers, NODE_START_MS, async () => `redis-server on port ${node.port} did not answer within ${NODE_START_MS} ms:\n${await logTail(node)}`);
  if (ended !== null) throw new Error(`${ended}\n${stderr}${await logTail(node)}`);
}

async function killNode(node: ClusterNode): Promise<void> {
  const child = node.child;
  node.child = null;
  if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** `CLUSTER INFO` of every node, one line each, for error messages. */
async function describeNodes(nodes: ClusterNode[]): Promise<string> {
  const lines = await Promise.all(
    nodes.map(async (node) => {
      const { output } = await redisCli(['-p', String(node.port), 'cluster', 'info']);
      const fields = output.split(/\r?\n/).filter((line) => /^cluster_(state|slots_assigned|slots_ok|slots_pfail|slots_fail|known_nodes):/.test(line));
      return `  ${node.port}: ${fields.length ? fields.join(' ') : output}`;
    }),
  );
  return lines.join('\n');
}

/** Every node says ok, serves every slot with no node suspected down, and knows all the others. */
async function clusterOk(nodes: ClusterNode[]): Promise<boolean> {
  const infos = await Promise.all(nodes.map((node) => redisCli(['-p', String(node.port), 'cluster', 'info'])));
  return infos.every(
    ({ code, output }) =>
      code === 0 &&
      output.includes('cluster_state:ok') &&
      output.includes(`cluster_slots_ok:${SLOTS}`) &&
      output.includes(`cluster_known_nodes:${nodes.length}`),
  );
}

async function waitForClusterOk(nodes: ClusterNode[], context: string): Promise<void> {
  await waitFor(
    () => clusterOk(nodes),
    CLUSTER_OK_MS,
    async () =>
      `Redis Cluster on ports ${nodes.map((node) => node.port).join(', ')} not ok within ${CLUSTER_OK_MS} ms ${context}\nCLUSTER INFO:\n${await describeNodes(nodes)}`,
  );
}

async function stopNodes(nodes: ClusterNode[]): Promise<void> {
  await Promise.all(nodes.map(killNode));
  await Promise.all(nodes.map((node) => rm(node.dir, { recursive: true, force: true })));
}

async function formCluster(nodes: ClusterNode[]): Promise<void> {
  // Every start settles before a failure is thrown, so that cleanup finds no node still starting.
  const started = await Promise.allSettled(nodes.map(startNode));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
  // redis-cli polls once a second until every node has met the others; on a busy machine that took over 5 s.
  const created = await redisCli(['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], CLUSTER_OK_MS);
  if (created.code !== 0) throw new Error(`redis-cli --cluster create exited with ${created.code}:\n${created.output}`);
  await waitForClusterOk(nodes, `after \`redis-cli --cluster create\`, which printed:\n${created.output}`);
}

/**
 * Starts `masters` (default 3, the fewest Redis Cluster accepts) masters and forms a cluster of them.
 * With `persistence` each master keeps an append-only file, as a production master does, so a
 * restarted one comes back with its data; without it (the default) it comes back empty.
 */
export async function startRedisCluster(options: { masters?: number; persistence?: boolean } = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  if (!Number.isInteger(masters) || masters < 3) throw new Error(`a Redis Cluster needs at least 3 masters, not ${masters}`);
  await requireBinaries();
  const ports = await distinctFreePorts(masters * 2);
  const nodes: ClusterNode[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      nodes.push({
        port: ports[i] as number,
        busPort: ports[masters + i] as number,
        dir: await mkdtemp(join(tmpdir(), 'redis-cluster-')),
        persistence: options.persistence ?? false,
        child: null,
      });
    }
    await formCluster(nodes);
  } catch (error) {
    await stopNodes(nodes);
    throw error;
  }
  return {
    nodes: nodes.map((node) => `127.0.0.1:${node.port}`).join(','),
    ports: nodes.map((node) => node.port),
    async restart(index) {
      const node = nodes[index];
      if (!node) throw new Error(`no master ${index}: the cluster has ${nodes.length}`);
      await killNode(node);
      await startNode(node);
      await waitForClusterOk(nodes, `after restarting the master on port ${node.port}`);
    },
    stop: () => stopNodes(nodes),
  };
}
