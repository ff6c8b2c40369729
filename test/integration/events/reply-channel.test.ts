/** The reply channel against real Redis: pub/sub delivery, repaired from the request's stream. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { ReplyChannel } from '../../../src/infra/events/reply-channel.ts';
import { createRedisKeys } from '../../../src/infra/redis/keys.ts';
import { encodeEventLine, encodeReplyMessage, type ReplyEvent, type ReplyEventType } from '../../../src/infra/events/reply-events.ts';
import { deletePrefix, TEST_REDIS_URL } from '../../helpers/gateway-processes.ts';

const SILENCE_MS = 200;
const TTL_MS = 60_000;
const prefix = `trc${randomBytes(4).toString('hex')}`;
const keys = createRedisKeys(prefix);
const TENANT = 'tenant-1';
const log = pino({ level: 'silent' });

let subscriber: Redis;
let commands: Redis;
let worker: Redis;
let reply: ReplyChannel;
const channels: ReplyChannel[] = [];
const clients: Redis[] = [];

function client(): Redis {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  clients.push(redis);
  return redis;
}

async function startChannel(instanceId: string, silenceMs: number, sub = client()): Promise<ReplyChannel> {
  const channel = new ReplyChannel({ subscriber: sub, commands, keys, instanceId, silenceMs, log });
  await channel.start();
  channels.push(channel);
  return channel;
}

beforeAll(async () => {
  subscriber = client();
  commands = client();
  worker = client();
  reply = await startChannel('web-1', SILENCE_MS, subscriber);
});

afterEach(async () => {
  await deletePrefix(commands, prefix);
});

afterAll(async () => {
  for (const channel of channels) await channel.stop();
  await deletePrefix(commands, prefix);
  for (const redis of clients) redis.disconnect();
});

let requestNumber = 0;
function newRequest(): { id: string; received: ReplyEvent[]; sink: (event: ReplyEvent) => void } {
  const received: ReplyEvent[] = [];
  return { id: `req_${++requestNumber}_${randomBytes(3).toString('hex')}`, received, sink: (event) => received.push(event) };
}

function line(type: ReplyEventType, n: number): string {
  return encodeEventLine(type, JSON.stringify({ n, text: `piece number ${n}` }));
}

/** What a worker does with one batch of events (src/infra/events/event-publisher.ts): an XADD each, then one SPUBLISH. */
async function publish(channel: ReplyChannel, requestId: string, events: Array<[seq: number, type: ReplyEventType]>): Promise<void> {
  const lines = events.map(([seq, type]) => ({ seq, line: line(type, seq) }));
  for (const event of lines) await worker.xadd(keys.events(TENANT, requestId), `0-${event.seq}`, 'e', event.line);
  await worker.pexpire(keys.events(TENANT, requestId), TTL_MS);
  await worker.spublish(channel.channel, encodeReplyMessage(requestId, lines));
}

/** Appends to the stream without publishing: the event pub/sub lost. */
async function appendOnly(requestId: string, seq: number, type: ReplyEventType): Promise<void> {
  await commands.xadd(keys.events(TENANT, requestId), `0-${seq}`, 'e', line(type, seq));
}

async function waitFor(check: () => boolean, timeoutMs = 3_000): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Date.now() - started;
}

const settle = (ms = 100) => new Promise((resolve) => setTimeout(resolve, ms));
const seqs = (events: ReplyEvent[]) => events.map((e) => e.seq);

describe('ReplyChannel', () => {
  it('(a) delivers published events in order, exactly once, with their payloads', async () => {
    const request = newRequest();
    reply.open(TENANT, request.id, request.sink);
    await publish(reply, request.id, [
      [1, 'chunk'],
      [2, 'chunk'],
      [3, 'chunk'],
    ]);
    await publish(reply, request.id, [[4, 'chunk']]);
    await publish(reply, request.id, [[5, 'done']]);
    await waitFor(() => request.received.length >= 5);
    await settle();
    expect(seqs(request.received)).toEqual([1, 2, 3, 4, 5]);
    expect(request.received.map((e) => e.type)).toEqual(['chunk', 'chunk', 'chunk', 'chunk', 'done']);
    expect(request.received[2]?.payload).toBe('{"n":3,"text":"piece number 3"}');
  });

  it('(b) fills a gap from the stream at once, before the silence probe would', async () => {
    const request = newRequest();
    reply.open(TENANT, request.id, request.sink);
    await publish(reply, request.id, [[1, 'chunk']]);
    await waitFor(() => request.received.length === 1);
    await appendOnly(request.id, 2, 'chunk');
    const published = Date.now();
    await publish(reply, request.id, [[3, 'chunk']]);
    await waitFor(() => request.received.length >= 3);
    expect(Date.now() - published).toBeLessThan(SILENCE_MS);
    await publish(reply, request.id, [[4, 'result']]);
    await waitFor(() => request.received.length >= 4);
    await settle();
    expect(seqs(request.received)).toEqual([1, 2, 3, 4]);
    expect(request.received[1]).toEqual({ seq: 2, type: 'chunk', payload: '{"n":2,"text":"piece number 2"}' });
  });

  it('(c) delivers a lost final event through the silence probe within about silenceMs', async () => {
    const request = newRequest();
    reply.open(TENANT, request.id, request.sink);
    await publish(reply, request.id, [[1, 'chunk']]);
    await waitFor(() => request.received.length === 1);
    await appendOnly(request.id, 2, 'done');
    const elapsed = await waitFor(() => request.received.length === 2, SILENCE_MS * 5);
    expect(elapsed).toBeLessThan(SILENCE_MS * 3);
    expect(request.received[1]?.type).toBe('done');
    expect(reply.size).toBe(0);
  });

  it('(c) also when nothing at all was published', async () => {
    const request = newRequest();
    reply.open(TENANT, request.id, request.sink);
    await appendOnly(request.id, 1, 'error');
    await waitFor(() => request.received.length === 1, SILENCE_MS * 5);
    expect(request.received[0]?.type).toBe('error');
  });

  it('(d) delivers an event published twice only once', async () => {
    const request = newRequest();
    reply.open(TENANT, request.id, request.sink);
    await publish(reply, request.id, [
      [1, 'chunk'],
      [2, 'chunk'],
    ]);
    const again = `${request.id}\n1 ${line('chunk', 1)}\n2 ${line('chunk', 2)}`;
    await commands.publish(reply.channel, again);
    await commands.publish(reply.channel, `${request.id}\n2 ${line('chunk', 2)}`);
    await publish(reply, request.id, [[3, 'done']]);
    await commands.publish(reply.channel, `${request.id}\n3 ${line('done', 3)}`);
    await waitFor(() => request.received.length >= 3);
    await settle(SILENCE_MS);
    expect(seqs(request.received)).toEqual([1, 2, 3]);
  });

  it('(e) probe() delivers what is in the stream', async () => {
    const quiet = await startChannel('web-quiet', 60_000);
    const request = newRequest();
    const subscription = quiet.open(TENANT, request.id, request.sink);
    await appendOnly(request.id, 1, 'chunk');
    await appendOnly(request.id, 2, 'chunk');
    await subscription.probe();
    expect(seqs(request.received)).toEqual([1, 2]);
    await appendOnly(request.id, 3, 'result');
    await subscription.probe();
    expect(seqs(request.received)).toEqual([1, 2, 3]);
    expect(quiet.size).toBe(0);
  });

  it('(f) closes the subscription after a terminal event and ignores anything later', async () => {
    const request = newRequest();
    const before = reply.size;
    reply.open(TENANT, request.id, request.sink);
    expect(reply.size).toBe(before + 1);
    await publish(reply, request.id, [
      [1, 'chunk'],
      [2, 'done'],
    ]);
    await waitFor(() => reply.size === before);
    await commands.publish(reply.channel, `${request.id}\n3 ${line('chunk', 3)}`);
    await appendOnly(request.id, 3, 'chunk');
    await settle(SILENCE_MS * 2);
    expect(seqs(request.received)).toEqual([1, 2]);
  });

  it('(f) close() stops delivery and is idempotent', async () => {
    const request = newRequest();
    const before = reply.size;
    const subscription = reply.open(TENANT, request.id, request.sink);
    subscription.close();
    subscription.close();
    expect(reply.size).toBe(before);
    await publish(reply, request.id, [[1, 'result']]);
    await settle();
    expect(request.received).toEqual([]);
  });

  it('repairs from the stream after the subscriber reconnects', async () => {
    const sub = client();
    const quiet = await startChannel('web-reconnect', 60_000, sub);
    const request = newRequest();
    quiet.open(TENANT, request.id, request.sink);
    const closed = once(sub, 'close');
    sub.disconnect(true);
    await closed;
    await publish(quiet, request.id, [[1, 'chunk']]);
    await once(sub, 'ready');
    await waitFor(() => request.received.length === 1, 2_000);
    expect(request.received[0]?.seq).toBe(1);
  });
});
