/**
 * Codex CLI (`@openai/codex`, pinned in package.json) through the gateway: `codex exec` with its
 * default tools against web and worker processes, over /v1/responses, once with an OpenAI-compatible
 * upstream and once with Anthropic (reached through the chat translation). Each run is one shell
 * loop: the upstream's first answer calls Codex's shell tool (`exec_command`), Codex runs it in its
 * working directory and sends the output back, and the second answer is the final text.
 *
 * Codex sends what made the gateway refuse it before: a `namespace` tool (its sub-agent tools) and a
 * hosted `web_search` tool. The runs are kept on loopback: analytics and plugins (which reach
 * chatgpt.com and GitHub) are off, and every other destination goes to a proxy that records it and
 * answers 403, which the test expects to have seen nothing.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ANTHROPIC_FIXTURE_MODEL, startAnthropicUpstream, type FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

const CODEX = fileURLToPath(new URL('../../node_modules/@openai/codex/bin/codex.js', import.meta.url));
/** What the upstreams have Codex run, and what it prints. */
const COMMAND = 'echo codex-was-here > made-by-codex.txt && echo wrote-it';
const FINAL_TEXT = 'The file is written.';
/** A run takes about half a second; this is well under the test's own timeout. */
const CODEX_TIMEOUT_MS = 20_000;

let upstream: FakeUpstream;
let anthropic: FakeAnthropic;
let gateway: GatewayUnderTest;
let apiKey: string;
let proxy: Server;
let proxyUrl: string;
/** The destinations Codex tried to reach beyond loopback. */
const escaped: string[] = [];

/** An HTTP proxy that records each destination and refuses it. */
async function startRefusingProxy(): Promise<void> {
  proxy = createServer((request, response) => {
    escaped.push(request.url ?? '');
    response.writeHead(403).end();
  });
  proxy.on('connect', (request, socket) => {
    escaped.push(request.url ?? '');
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

beforeAll(async () => {
  [upstream, anthropic] = await Promise.all([startFakeUpstream(), startAnthropicUpstream(), startRefusingProxy()]);
  const catalog = testCatalog(upstream.url);
  catalog.models.claude = { ...ANTHROPIC_FIXTURE_MODEL, base_url: anthropic.url };
  gateway = await startGateway({ catalog, env: { ANTHROPIC_API_KEY: 'sk-ant-e2e' } });
  apiKey = (await gateway.issueKey('acme', 'app')).secret;
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([upstream?.close(), anthropic?.close(), new Promise((resolve) => proxy?.close(resolve))]);
});

beforeEach(() => {
  upstream.reset();
  anthropic.reset();
  escaped.length = 0;
});

/**
 * Codex's configuration: the gateway as a Responses provider keyed from GATEWAY_API_KEY. Retries
 * are off so that a refusal fails the run at once; analytics and plugins are off because they are
 * the only features that reach beyond the provider (chatgpt.com, GitHub). Everything else is Codex's
 * default, its tools included.
 */
function configToml(model: string): string {
  return `model = "${model}"
model_provider = "gateway"

[model_providers.gateway]
name = "LLM gateway"
base_url = "${gateway.baseURL}"
wire_api = "responses"
env_key = "GATEWAY_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
`;
}

interface CodexRun {
  code: number | null;
  output: string;
  lastMessage: string;
  workdir: string;
}

/**
 * `codex exec` in a fresh working directory with a fresh CODEX_HOME and HOME. It runs commands
 * without approvals or its sandbox (which needs namespaces a container seldom grants, and the
 * directory is the test's own); `--ephemeral` keeps no session files.
 */
async function runCodex(model: string, prompt: string): Promise<CodexRun> {
  const home = await mkdtemp(join(tmpdir(), 'codex-home-'));
  const workdir = await mkdtemp(join(tmpdir(), 'codex-work-'));
  await writeFile(join(home, 'config.toml'), configToml(model));
  const lastMessagePath = join(home, 'last-message.txt');
  const args = [
    CODEX,
    'exec',
    '--strict-config',
    '--skip-git-repo-check',
    '--dangerously-bypass-approvals-and-sandbox',
    '--ephemeral',
    '--color',
    'never',
    '--output-last-message',
    lastMessagePath,
    prompt,
  ];
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CODEX_HOME: home,
    GATEWAY_API_KEY: apiKey,
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    ALL_PROXY: proxyUrl,
    NO_PROXY: '127.0.0.1,localhost',
  };
  // In a process group of its own, so that a run cut short takes the commands it started with it.
  const child = spawn(process.execPath, args, { cwd: workdir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr.on('data', (data: Buffer) => (output += data.toString()));
  // Codex waits for a network that never comes back rather than fail; the test must not.
  const timer = setTimeout(() => process.kill(-(child.pid as number), 'SIGKILL'), CODEX_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  const lastMessage = existsSync(lastMessagePath) ? await readFile(lastMessagePath, 'utf8') : '';
  await rm(home, { recursive: true, force: true });
  return { code, output, lastMessage, workdir };
}

/** The names of the tools an upstream was offered. */
const toolNames = (tools: unknown) => (tools as Array<{ name?: string; function?: { name: string } }>).map((tool) => tool.function?.name ?? tool.name);

describe('codex exec through the gateway', () => {
  it('runs a shell loop with an OpenAI-compatible upstream, calling a tool of a namespace on the way', async () => {
    upstream.script([
      {
        kind: 'ok',
        toolCalls: [
          { id: 'call_sh', name: 'exec_command', arguments: JSON.stringify({ cmd: COMMAND }) },
          // A tool of Codex's multi_agent_v1 namespace: Codex answers an unknown agent, not an unknown tool.
          { id: 'call_ns', name: 'multi_agent_v1__close_agent', arguments: '{"target":"nobody"}' },
        ],
      },
      { kind: 'ok', text: FINAL_TEXT },
    ]);
    const run = await runCodex('fake-gpt', 'Write made-by-codex.txt.');
    try {
      expect(run.code, run.output).toBe(0);
      expect(await readFile(join(run.workdir, 'made-by-codex.txt'), 'utf8')).toBe('codex-was-here\n');
      expect(upstream.requests).toHaveLength(2);
      const offered = toolNames((upstream.requests[0]?.body as { tools: unknown }).tools);
      expect(offered).toEqual(expect.arrayContaining(['exec_command', 'multi_agent_v1__spawn_agent', 'multi_agent_v1__close_agent']));
      expect(offered).not.toContain('web_search');
      const messages = (
        upstream.requests[1]?.body as {
          messages: Array<{ role: string; tool_call_id?: string; content?: unknown; tool_calls?: Array<{ function: { name: string } }> }>;
        }
      ).messages;
      const outputOf = (id: string) => JSON.stringify(messages.find((message) => message.role === 'tool' && message.tool_call_id === id)?.content);
      expect(outputOf('call_sh')).toContain('wrote-it');
      expect(outputOf('call_ns')).toContain('invalid agent id nobody');
      expect(messages.flatMap((message) => message.tool_calls ?? []).map((call) => call.function.name)).toEqual([
        'exec_command',
        'multi_agent_v1__close_agent',
      ]);
      expect(run.lastMessage.trim()).toBe(FINAL_TEXT);
      expect(escaped).toEqual([]);
    } finally {
      await rm(run.workdir, { recursive: true, force: true });
    }
  });

  it('runs a shell loop with Anthropic behind the gateway', async () => {
    anthropic.script([
      { kind: 'fixture', name: 'codex-exec-command' },
      { kind: 'ok', text: FINAL_TEXT },
    ]);
    const run = await runCodex('claude', 'Write made-by-codex.txt.');
    try {
      expect(run.code, run.output).toBe(0);
      expect(await readFile(join(run.workdir, 'made-by-codex.txt'), 'utf8')).toBe('codex-was-here\n');
      expect(anthropic.requests).toHaveLength(2);
      const offered = toolNames((anthropic.requests[0]?.body as { tools: unknown }).tools);
      expect(offered).toEqual(expect.arrayContaining(['exec_command', 'multi_agent_v1__close_agent']));
      expect(offered).not.toContain('web_search');
      const turns = (anthropic.requests[1]?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
      const results = turns.flatMap((turn) => (Array.isArray(turn.content) ? (turn.content as Array<{ type: string; tool_use_id?: string }>) : []));
      const result = results.find((block) => block.type === 'tool_result' && block.tool_use_id === 'toolu_01Dq8Ir3Ox6Su9Mn4Wc7Lt0Q');
      expect(JSON.stringify(result)).toContain('wrote-it');
      expect(run.lastMessage.trim()).toBe(FINAL_TEXT);
      expect(escaped).toEqual([]);
    } finally {
      await rm(run.workdir, { recursive: true, force: true });
    }
  });
});
