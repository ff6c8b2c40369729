/**
 * Slow clients, against web and worker processes: headers or a body trickled a byte a second are cut
 * at the configured timeouts (408, the envelope) while other clients are served as usual, and a client
 * reading a stream a byte a second is dropped once what it leaves unread passes the limit, its upstream
 * call cancelled and its usage recorded for what was made.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually } from '../helpers/http.ts';

const HEADERS_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 3_000;
const MAX_BUFFERED_BYTES = 64 * 1024;

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
let secret: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({
    catalog: testCatalog(upstream.url),
    env: {
      CLIENT_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      CLIENT_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      SSE_MAX_BUFFERED_BYTES: String(MAX_BUFFERED_BYTES),
      UPSTREAM_BODY_TIMEOUT_MS: '60000',
    },
  });
  secret = (await gateway.issueKey('acme', 'developer')).secret;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** A connection that sends `head` then `trickle` a byte a second; resolves with what the server answered and when it closed. */
function trickle(head: string, trickled: string): { socket: Socket; done: Promise<{ text: string; afterMs: number }> } {
  const port = Number(new URL(gateway.origin).port);
  const socket = connect(port, '127.0.0.1');
  const started = Date.now();
  let text = '';
  let at = 0;
  const timer = setInterval(() => {
    if (at < trickled.length && !socket.destroyed) socket.write(trickled[at++] as string);
  }, 1000);
  socket.write(head);
  socket.setEncoding('utf8');
  socket.on('data', (data: string) => (text += data));
  socket.on('error', () => undefined);
  const done = new Promise<{ text: string; afterMs: number }>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ text, afterMs: Date.now() - started });
    }),
  );
  return { socket, done };
}

function envelopeOf(text: string): { status: number; error: Record<string, unknown>; requestIdHeader: string | undefined } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return {
    status: Number(head.split(' ')[1]),
    error: (JSON.parse(body) as { error: Record<string, unknown> }).error,
    requestIdHeader: /x-request-id: (\S+)/i.exec(head)?.[1],
  };
}

async function timedCompletion(): Promise<number> {
  const started = performance.now();
  const response = await call(gateway.origin, secret, 'POST', '/v1/chat/completions', { model: 'sim', messages: [{ role: 'user', content: 'hi' }] });
  expect(response.status).toBe(200);
  return performance.now() - started;
}

describe('clients that send slowly', () => {
  it('headers trickled a byte a second are cut at the headers timeout with a 408 envelope, while other clients are served', async () => {
    const baseline = await timedCompletion();
    const slow = Array.from({ length: 20 }, () => trickle('GET /v1/budgets HTTP/1.1\r\nHost: x\r\n', `Authorization: Bearer ${secret}\r\n\r\n`));
    const during: number[] = [];
    for (let i = 0; i < 5; i++) during.push(await timedCompletion());
    const results = await Promise.all(slow.map((s) => s.done));
    for (const { text, afterMs } of results) {
      const answer = envelopeOf(text);
      expect(answer.status).toBe(408);
      expect(answer.error).toMatchObject({ code: 'request_timeout', type: 'invalid_request_error' });
      expect(answer.requestIdHeader).toBe(answer.error.request_id);
      // Node looks for late clients once a second.
      expect(afterMs).toBeLessThan(HEADERS_TIMEOUT_MS + 2_000);
    }
    // Twenty stalled connections cost the others nothing noticeable.
    expect(Math.max(...during)).toBeLessThan(Math.max(500, 10 * baseline));
  });

  it('a body trickled a byte a second is cut at the request timeout with a 408 envelope', async () => {
    const body = JSON.stringify({ model: 'sim', messages: [{ role: 'user', content: 'hi' }] });
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { text, afterMs } = await trickle(head, body).done;
    const answer = envelopeOf(text);
    expect(answer.status).toBe(408);
    expect(answer.error).toMatchObject({ code: 'request_timeout' });
    expect(afterMs).toBeLessThan(REQUEST_TIMEOUT_MS + 2_000);
  });
});

describe('a client that reads a stream slowly', () => {
  it('is dropped once what it leaves unread passes the limit; its upstream call is cancelled and what was made is recorded', async () => {
    // 200 pieces of 64 KiB: more than the kernel's socket buffers take (about 4 MiB here) and the limit on top.
    upstream.script([{ kind: 'slow-stream', chunkDelayMs: 10, chunks: 200, chunkBytes: 64 * 1024 }]);
    const body = JSON.stringify({ model: 'fake-gpt', stream: true, messages: [{ role: 'user', content: 'a long answer, please' }] });
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const port = Number(new URL(gateway.origin).port);
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(head);
    // Reads a byte a second: effectively nothing.
    socket.pause();
    const reader = setInterval(() => socket.read(1), 1000);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await upstream.waitForClose(0, 20_000);
    await closed;
    clearInterval(reader);
    expect(upstream.requests[0]?.clientClosed).toBe(true);
    const records = async () =>
      (await call(gateway.origin, secret, 'GET', '/v1/usage?since=2000-01-01&limit=1000')).body.data as Array<Record<string, unknown>>;
    await eventually(async () => (await records()).some((r) => r.status === 'cancelled'), 10_000, 'the cancelled request recorded');
    const record = (await records()).find((r) => r.status === 'cancelled');
    expect(Number(record?.completion_tokens)).toBeGreaterThan(0);
    expect(Number(record?.cost_micros)).toBeGreaterThan(0);
  }, 60_000);
});
