/**
 * A webhook receiver on loopback: records every delivery as received (headers, raw body) and
 * answers each with the next scripted status (200 once the script is used up), or never answers.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';

/** One delivery as the receiver got it. */
export interface ReceivedDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers one delivery with: a status, a redirect, or nothing at all. */
export type ReceiverAnswer = number | { redirect: string } | 'hang' | { status: number; body: string };

/** A running receiver. */
export interface WebhookReceiver {
  /** http://127.0.0.1:<port> */
  origin: string;
  deliveries: ReceivedDelivery[];
  /** Queues answers for the next deliveries, in order. */
  script(answers: ReceiverAnswer[]): void;
  /** Resolves once `count` deliveries arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

const sdk = new OpenAI({ apiKey: 'unused', baseURL: 'http://127.0.0.1:9' });

/** Verifies a delivery as a customer would, with the official SDK: the parsed event, or a rejection. */
export function unwrap(delivery: ReceivedDelivery, secret: string): Promise<unknown> {
  const headers = Object.fromEntries(Object.entries(delivery.headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  return sdk.webhooks.unwrap(delivery.body, headers, secret);
}

function answer(res: ServerResponse, how: ReceiverAnswer): void {
  if (how === 'hang') return;
  if (typeof how === 'number') return void res.writeHead(how).end();
  if ('redirect' in how) return void res.writeHead(302, { location: how.redirect }).end();
  res.writeHead(how.status, { 'content-type': 'text/plain' }).end(how.body);
}

/** Starts a receiver on 127.0.0.1. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const deliveries: ReceivedDelivery[] = [];
  const queue: ReceiverAnswer[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      for (const wake of waiters.splice(0)) wake();
      answer(res, queue.shift() ?? 200);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deliveries,
    script: (answers) => void queue.push(...answers),
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (deliveries.length < count) {
        if (Date.now() > deadline) throw new Error(`${deliveries.length} of ${count} deliveries arrived within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return deliveries.slice(0, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
