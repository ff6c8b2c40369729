/**
 * A Heroku-style deploy as a Node.js buildpack makes it, from the project's files: `npm ci` with the dev
 * dependencies, `npm run build`, the dev dependencies pruned, then the Procfile's `release` and `web` on the
 * buildpack's own Node (here the one running the tests). The pruned tree must still serve the console, and must
 * not carry the Node 24 that development brings from the registry.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.ts';
import { TEST_REDIS_URL, deletePrefix, stopProcess, testRedis, type GatewayProcess } from '../helpers/gateway-processes.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PREFIX = 'buildpack';

let app: string;
let database: TestDatabase;
let web: GatewayProcess | undefined;
let origin: string;

/** Runs a build step in the app's folder; a failure throws with its output. */
function step(command: string, args: string[]): void {
  const run = spawnSync(command, args, { cwd: app, encoding: 'utf8', env: { ...process.env, NODE_ENV: '' } });
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${run.status}):\n${run.stderr}${run.stdout}`);
}

/** The Procfile's command for a process type. */
function procfileCommand(type: string): string {
  const line = readFileSync(join(app, 'Procfile'), 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${type}:`));
  if (!line) throw new Error(`the Procfile has no ${type} process`);
  return line.slice(type.length + 1).trim();
}

/** The environment a dyno gets: the buildpack's Node first on the PATH, the app's config vars. */
function dynoEnv(port: number): Record<string, string> {
  return {
    PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: PREFIX,
    DATABASE_URL: database.url,
    CATALOG: join(app, 'catalog/dev.yaml'),
    METRICS_PORT: '0',
  };
}

/** Starts a Procfile process through the shell, as a dyno does (`exec`, so that a signal reaches node). */
function startProcess(type: string, env: Record<string, string>): GatewayProcess {
  let output = '';
  const child = spawn('/bin/sh', ['-c', `exec ${procfileCommand(type)}`], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (data: Buffer) => (output += data.toString()));
  child.stderr.on('data', (data: Buffer) => (output += data.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, exited };
}

beforeAll(async () => {
  app = mkdtempSync(join(tmpdir(), 'gw-buildpack-'));
  // The slug's sources: what git tracks (or would, for files not yet added), as a fresh clone has them.
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const path of listed.stdout.split('\0').filter(Boolean)) {
    if (existsSync(join(ROOT, path))) cpSync(join(ROOT, path), join(app, path));
  }
  step('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund']);
  step('npm', ['run', 'build']);
  step('npm', ['prune', '--omit=dev', '--no-audit', '--no-fund']);
  database = await createTestDatabase();
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  const release = startProcess('release', dynoEnv(port));
  expect(await release.exited, release.output()).toBe(0);
  web = startProcess('web', dynoEnv(port));
  const deadline = Date.now() + 30_000;
  while ((await fetch(`${origin}/readyz`).catch(() => null))?.status !== 200) {
    if (web.child.exitCode !== null || Date.now() > deadline) throw new Error(`web did not start:\n${web.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 600_000);

afterAll(async () => {
  if (web) await stopProcess(web);
  const redis = testRedis(null);
  await deletePrefix(redis, PREFIX);
  redis.disconnect();
  await database?.drop();
  if (app) rmSync(app, { recursive: true, force: true });
});

describe('a buildpack deploy', () => {
  it('builds the console in `npm run build` and serves it from the pruned slug', async () => {
    expect(existsSync(join(app, 'dist/console/index.html'))).toBe(true);
    for (const path of ['/console', '/console/usage']) {
      const response = await fetch(`${origin}${path}`);
      expect(response.status, `${path}: ${web?.output()}`).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await response.text()).toContain('<script type="module"');
    }
  });

  it('prunes the development Node and tools: the slug runs on the buildpack Node', () => {
    expect(existsSync(join(app, 'node_modules/vite'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/node'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/.bin/node'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/fastify'))).toBe(true);
  });
});
