/**
 * The Open Responses compliance suite (test/vendor/openresponses/, run with bun as its README
 * says) against web and worker processes: every one of its HTTP tests must pass. Its WebSocket
 * tests are left out: the gateway serves no WebSocket mode.
 *
 * The upstream is a fake OpenAI-compatible chat server that answers as a capable model would: a
 * call of the first function when the request offers tools, text otherwise (whatever images or
 * files the request carries), so that each test sees the output it asks the model for.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sendJson, sseEvent, startFakeServer, type FakeServer } from '../helpers/fake-server.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUN = fileURLToPath(new URL('../../node_modules/.bin/bun', import.meta.url));
const SUITE = 'test/vendor/openresponses/bin/compliance-test.ts';
const TESTS = 'test/vendor/openresponses/src/lib/compliance-tests.ts';

interface ChatBody {
  model?: string;
  stream?: boolean;
  tools?: Array<{ function: { name: string } }>;
}

interface ComplianceResult {
  id: string;
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  errors?: string[];
}

let upstream: FakeServer<{ kind: 'answer' }>;
let gateway: GatewayUnderTest;
let apiKey: string;

/** A call the fake model makes. */
interface FakeCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** What the fake model says: a call of the first tool offered, or a sentence. */
function answerOf(body: ChatBody): { content: string | null; tool_calls?: [FakeCall] } {
  const tool = body.tools?.[0];
  if (tool === undefined) return { content: 'Ahoy, Alice: a red heart, counted 1 2 3 4 5.' };
  return {
    content: null,
    tool_calls: [{ id: 'call_compliance_1', type: 'function', function: { name: tool.function.name, arguments: '{"location":"San Francisco, CA"}' } }],
  };
}

/** The fake upstream: each answer whole, or streamed as OpenAI streams it (a call's name first, then its arguments), usage last. */
function startCapableUpstream(): Promise<FakeServer<{ kind: 'answer' }>> {
  return startFakeServer({
    route: (method, path) => method === 'POST' && path === '/v1/chat/completions',
    defaultBehaviour: { kind: 'answer' },
    respond: (_behaviour, request, res) => {
      const body = request.body as ChatBody;
      const message = answerOf(body);
      const finish_reason = message.tool_calls ? 'tool_calls' : 'stop';
      const usage = { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 };
      const base = { id: 'chatcmpl-compliance', created: Math.floor(Date.now() / 1000), model: body.model ?? 'fake' };
      if (body.stream !== true) {
        return sendJson(res, 200, {
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason }],
          usage,
        });
      }
      const chunk = (delta: Record<string, unknown>, finish: string | null) =>
        sseEvent({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (message.tool_calls) {
        const [{ id, type, function: call }] = message.tool_calls;
        res.write(chunk({ role: 'assistant', tool_calls: [{ index: 0, id, type, function: { name: call.name, arguments: '' } }] }, null));
        res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: call.arguments } }] }, null));
      } else {
        for (const word of (message.content ?? '').split(/(?<= )/)) res.write(chunk({ content: word }, null));
      }
      res.write(chunk({}, finish_reason));
      res.write(sseEvent({ ...base, object: 'chat.completion.chunk', choices: [], usage }));
      res.end('data: [DONE]\n\n');
    },
  });
}

beforeAll(async () => {
  upstream = await startCapableUpstream();
  gateway = await startGateway({ catalog: testCatalog(`${upstream.origin}/v1`) });
  apiKey = (await gateway.issueKey('acme', 'app')).secret;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** Runs bun in the project; a run that exits non-zero still gives its output when it wrote a JSON report. */
async function bun(args: string[]): Promise<string> {
  try {
    return (await run(BUN, args, { cwd: ROOT })).stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    if (stdout?.trim().startsWith('{') === true) return stdout;
    throw new Error(`bun ${args.join(' ')} failed: ${stderr}`, { cause: error });
  }
}

/** The ids of the suite's HTTP tests, as the suite itself lists them. */
async function httpTestIds(): Promise<string[]> {
  const script = `import { testTemplates } from './${TESTS}'; console.log(testTemplates.filter((t) => (t.transport ?? 'http') === 'http').map((t) => t.id).join(','));`;
  return (await bun(['--eval', script])).trim().split(',');
}

it('passes every HTTP test of the Open Responses compliance suite', { timeout: 60_000 }, async () => {
  const ids = await httpTestIds();
  expect(ids.length).toBeGreaterThan(0);
  // The suite exits 1 when a test fails; its JSON report says which.
  const report = JSON.parse(
    await bun(['run', SUITE, '--base-url', gateway.baseURL, '--api-key', apiKey, '--model', 'fake-gpt', '--filter', ids.join(','), '--json']),
  ) as { results: ComplianceResult[] };
  const failures = report.results
    .filter((result) => result.status !== 'passed')
    .map((result) => `${result.name} (${result.status}): ${(result.errors ?? []).join('; ')}`);
  expect(failures, failures.join('\n')).toEqual([]);
  expect(report.results.map((result) => result.id).sort()).toEqual([...ids].sort());
});
