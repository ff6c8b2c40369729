/** The Redis Cluster harness (test/helpers/redis-cluster.ts) through ioredis' Cluster: slots, routing, sharded pub/sub, a master restart. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Cluster, Redis, type ClusterOptions } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../../helpers/redis-cluster.ts';

const SLOTS = 16_384;
const MASTERS = 3;
const RESTARTED = 1;
const prefix = `trcl${randomBytes(4).toString('hex')}`;

let cluster: RedisCluster;
let commands: Cluster;
let subscriber: Cluster;
/** Port of the master that serves each slot. */
let owners: number[];
/** tags[i] is a hash tag whose slot master i serves. */
let tags: string[];
const received: Array<{ channel: string; message: string }> = [];
const clients: Array<Cluster | Redis> = [];
const clientErrors: Error[] = [];

function clusterClient(options: ClusterOptions = {}): Cluster {
  const client = new Cluster(
    cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
    options,
  );
  // A sharded subscriber that cannot reach a restarted master reports it as an 'error' event,
  // which would throw without a listener.
  client.on('error', (error: Error) => clientErrors.push(error));
  clients.push(client);
  return client;
}

function nodeClient(port: number): Redis {
  const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 0 });
  client.on('error', (error: Error) => clientErrors.push(error));
  clients.push(client);
  return client;
}

async function slotOwners(client: Cluster): Promise<number[]> {
  const owners = new Array<number>(SLOTS);
  for (const [start, end, master] of await client.cluster('SLOTS')) {
    if (master) owners.fill(master[1], start, end + 1);
  }
  return owners;
}

async function tagPerMaster(client: Cluster): Promise<string[]> {
  const byPort = new Map<number, string>();
  for (let n = 0; byPort.size < cluster.ports.length; n++) {
    const tag = `${prefix}-${n}`;
    const port = owners[await client.cluster('KEYSLOT', `{${tag}}`)] as number;
    if (!byPort.has(port)) byPort.set(port, tag);
  }
  return cluster.ports.map((port) => byPort.get(port) as string);
}

const key = (tag: string, name: string) => `{${tag}}:${name}`;

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: MASTERS });
  commands = clusterClient();
  // Without shardedSubscribers, ioredis sends SSUBSCRIBE to one node and never emits 'smessage'.
  subscriber = clusterClient({ shardedSubscribers: true });
  subscriber.on('smessage', (channel: string, message: string) => received.push({ channel, message }));
  owners = await slotOwners(commands);
  tags = await tagPerMaster(commands);
  for (const tag of tags) await subscriber.ssubscribe(key(tag, 'events'));
});

afterAll(async () => {
  for (const client of clients) client.disconnect();
  await cluster?.stop();
});

describe('a fresh cluster', () => {
  it('has one master per port, which together serve all 16384 slots', async () => {
    expect(cluster.nodes).toBe(cluster.ports.map((port) => `127.0.0.1:${port}`).join(','));
    expect(owners.filter((port) => port !== undefined)).toHaveLength(SLOTS);
    expect(new Set(owners)).toEqual(new Set(cluster.ports));
    const masterPorts = commands.nodes('master').map((node) => node.options.port);
    expect(masterPorts).toHaveLength(MASTERS);
    expect(new Set(masterPorts)).toEqual(new Set(cluster.ports));
  });

  it('stores each hash tag on the master that serves its slot, and only there', async () => {
    for (const [i, tag] of tags.entries()) {
      await commands.set(key(tag, 'value'), `on master ${i}`);
      expect(await commands.get(key(tag, 'value'))).toBe(`on master ${i}`);
    }
    for (const [j, port] of cluster.ports.entries()) {
      const node = nodeClient(port);
      for (const [i, tag] of tags.entries()) {
        if (i === j) expect(await node.get(key(tag, 'value'))).toBe(`on master ${i}`);
        else await expect(node.get(key(tag, 'value'))).rejects.toThrow(/^MOVED /);
      }
    }
  });

  it('delivers SPUBLISH to the SSUBSCRIBE of every shard', async () => {
    received.length = 0;
    for (const tag of tags) expect(await commands.spublish(key(tag, 'events'), `hello ${tag}`)).toBe(1);
    await waitFor(() => received.length === tags.length, 3_000);
    expect(received).toEqual(tags.map((tag) => ({ channel: key(tag, 'events'), message: `hello ${tag}` })));
  });
});

describe('after SIGKILL and restart of one master', () => {
  let idBefore: string;

  beforeAll(async () => {
    const tag = tags[RESTARTED] as string;
    await commands.set(key(tag, 'before'), 'lost with the process');
    idBefore = await nodeClient(cluster.ports[RESTARTED] as number).cluster('MYID');
    await cluster.restart(RESTARTED);
  });

  it('is the same node (same id from nodes.conf) without its data', async () => {
    expect(await nodeClient(cluster.ports[RESTARTED] as number).cluster('MYID')).toBe(idBefore);
    // Nodes run without persistence: an empty key space proves the process really restarted.
    expect(await commands.get(key(tags[RESTARTED] as string, 'before'))).toBeNull();
  });

  it('serves reads and writes on its slots again', async () => {
    const restartedKey = key(tags[RESTARTED] as string, 'after');
    await commands.set(restartedKey, 'written after the restart');
    expect(await commands.get(restartedKey)).toBe('written after the restart');
    expect(await commands.incr(key(tags[RESTARTED] as string, 'counter'))).toBe(1);
  });

  it('delivers sharded messages again, on its shard too, once ioredis has resubscribed', async () => {
    received.length = 0;
    const channels = tags.map((tag) => key(tag, 'events'));
    const arrived = (channel: string) => received.some((entry) => entry.channel === channel);
    // ioredis resubscribes in the background after the node comes back; publish until it has.
    await waitFor(async () => {
      for (const channel of channels) if (!arrived(channel)) await commands.spublish(channel, 'after restart');
      return channels.every(arrived);
    }, 10_000);
    expect(new Set(received.map((entry) => entry.channel))).toEqual(new Set(channels));
  });
});

describe('with persistence, after SIGKILL and restart of one master', () => {
  let persistent: RedisCluster;

  beforeAll(async () => {
    persistent = await startRedisCluster({ masters: MASTERS, persistence: true });
  });

  afterAll(async () => {
    await persistent?.stop();
  });

  it('keeps every write it acknowledged', async () => {
    const port = persistent.ports[RESTARTED] as number;
    const node = nodeClient(port);
    const ranges = (await node.cluster('SLOTS')).filter(([, , master]) => master?.[1] === port);
    let key = '';
    for (let n = 0; !key; n++) {
      const slot = await node.cluster('KEYSLOT', `${prefix}-kept-${n}`);
      if (ranges.some(([start, end]) => slot >= start && slot <= end)) key = `${prefix}-kept-${n}`;
    }
    await node.set(key, 'written before the restart');
    await persistent.restart(RESTARTED);
    expect(await nodeClient(port).get(key)).toBe('written before the restart');
  });
});
