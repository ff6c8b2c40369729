/**
 * The campaign's fake OpenAI upstream: test/helpers/fake-server.ts's machinery (its script queue is
 * how faults are injected: the next N calls hang, fail or break) with an answer of its own, because
 * the campaign needs what test/helpers/fake-upstream.ts does not give: a completion id unique to each
 * upstream call (so that two answers for one Idempotency-Key can be told apart) and a pace and length
 * read from the request (so that streams last long enough to be cut by a fault or aborted by a client).
 * A message asks with `pace<N>` (N ms between chunks; a JSON answer waits N ms per word) and
 * `words<N>` (the answer's length, at most max_tokens). Usage counts words, as fake-upstream does.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, sendStatus, sseEvent, startFakeServer, type FakeServer, type RecordedRequest } from '../helpers/fake-server.ts';

/** What the next call gets: the answer its request asks for, or a scripted fault. */
export type ChaosBehaviour =
  | { kind: 'ok' }
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  | { kind: 'hang' }
  /** A stream cut after half its chunks; a JSON answer cut inside its body. */
  | { kind: 'break-mid-stream' };

/** A running chaos upstream; `url` ends in `/v1`. */
export interface ChaosUpstream extends FakeServer<ChaosBehaviour> {
  name: string;
  url: string;
}

type ChatBody = {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages?: Array<{ content?: unknown }>;
  max_tokens?: number;
};

const VOCABULARY = ['amber', 'harbor', 'lantern', 'meadow', 'quartz', 'saffron', 'timber', 'velvet', 'willow', 'zephyr'];

function words(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length;
}

function promptText(body: ChatBody): string {
  return (body.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : '')).join(' ');
}

function directive(text: string, name: string, fallback: number): number {
  const found = new RegExp(`\\b${name}(\\d+)\\b`).exec(text);
  return found ? Number(found[1]) : fallback;
}

/** The answer a request asks for: its words, the pace between them, and the usage it reports. */
export function plannedAnswer(prompt: string, maxTokens: number | undefined): { text: string[]; paceMs: number; promptTokens: number } {
  const count = Math.max(1, Math.min(directive(prompt, 'words', 6), maxTokens ?? Infinity));
  const start = words(prompt) % VOCABULARY.length;
  const text = Array.from({ length: count }, (_, i) => `${VOCABULARY[(start + i) % VOCABULARY.length]}${i === count - 1 ? '.' : ' '}`);
  return { text, paceMs: directive(prompt, 'pace', 20), promptTokens: words(prompt) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function chunk(id: string, model: string, delta: Record<string, unknown>, finish: string | null): Record<string, unknown> {
  return { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish }] };
}

async function stream(res: ServerResponse, id: string, body: ChatBody, breakAt: number | null, breakConnection: () => void): Promise<void> {
  const answer = plannedAnswer(promptText(body), body.max_tokens);
  const model = body.model ?? 'fake-model';
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  for (const [i, piece] of answer.text.entries()) {
    if (breakAt !== null && i === breakAt) return breakConnection();
    await sleep(answer.paceMs);
    if (res.destroyed) return;
    res.write(sseEvent(chunk(id, model, i === 0 ? { role: 'assistant', content: piece } : { content: piece }, null)));
  }
  res.write(sseEvent(chunk(id, model, {}, 'stop')));
  const usage = { prompt_tokens: answer.promptTokens, completion_tokens: answer.text.length, total_tokens: answer.promptTokens + answer.text.length };
  if (body.stream_options?.include_usage === true) res.write(sseEvent({ ...chunk(id, model, {}, null), choices: [], usage }));
  res.end('data: [DONE]\n\n');
}

async function complete(res: ServerResponse, id: string, body: ChatBody, broken: boolean, breakConnection: () => void): Promise<void> {
  const answer = plannedAnswer(promptText(body), body.max_tokens);
  await sleep(answer.paceMs * answer.text.length);
  if (res.destroyed) return;
  if (broken) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.write(`{"id":"${id}","choi`, breakConnection);
  }
  const usage = { prompt_tokens: answer.promptTokens, completion_tokens: answer.text.length, total_tokens: answer.promptTokens + answer.text.length };
  sendJson(res, 200, {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content: answer.text.join('') }, finish_reason: 'stop' }],
    usage,
  });
}

/** Starts a chaos upstream named `name` (its completion ids are `chatcmpl-<name>-<n>`). */
export async function startChaosUpstream(name: string): Promise<ChaosUpstream> {
  let calls = 0;
  const respond = async (behaviour: ChaosBehaviour, request: RecordedRequest<ChaosBehaviour>, res: ServerResponse, breakConnection: () => void) => {
    const body = request.body as ChatBody;
    const id = `chatcmpl-${name}-${++calls}`;
    // The recorded calls would grow for the whole campaign: nothing reads them.
    request.body = null;
    switch (behaviour.kind) {
      case 'status':
        return sendStatus(res, behaviour.status, { error: { message: `chaos upstream ${behaviour.status}`, type: 'server_error' } }, behaviour.headers);
      case 'hang':
        return;
      case 'ok':
      case 'break-mid-stream': {
        const broken = behaviour.kind === 'break-mid-stream';
        if (body.stream === true) {
          const length = plannedAnswer(promptText(body), body.max_tokens).text.length;
          return stream(res, id, body, broken ? Math.max(1, Math.floor(length / 2)) : null, breakConnection);
        }
        return complete(res, id, body, broken, breakConnection);
      }
    }
  };
  const server = await startFakeServer<ChaosBehaviour>({
    route: (method, path) => method === 'POST' && path === '/v1/chat/completions',
    defaultBehaviour: { kind: 'ok' },
    respond,
  });
  const trim = setInterval(() => server.requests.splice(0, Math.max(0, server.requests.length - 100)), 5_000);
  trim.unref();
  const close = server.close.bind(server);
  return Object.assign(server, {
    name,
    url: `${server.origin}/v1`,
    close: async () => {
      clearInterval(trim);
      await close();
    },
  });
}
