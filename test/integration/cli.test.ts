import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKeySecret } from '../../src/domain/access/api-key-secret.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { deletePrefix } from '../helpers/gateway-processes.ts';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

const NODE = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/gateway.mjs', import.meta.url));

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI against `databaseUrl`, with any MONGODB_URI removed (it would win). */
function gateway(databaseUrl: string, ...args: string[]): Promise<CliResult> {
  return gatewayWith({ DATABASE_URL: databaseUrl }, ...args);
}

/** Runs the real CLI with extra environment (REDIS_URL, CATALOG…). */
function gatewayWith(extra: Record<string, string>, ...args: string[]): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.MONGODB_URI;
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('gateway CLI (PostgreSQL)', () => {
  let database: TestDatabase;
  let sql: Client;
  const run = (...args: string[]) => gateway(database.url, ...args);

  beforeAll(async () => {
    database = await createTestDatabase();
    sql = new Client({ connectionString: database.url });
    await sql.connect();
    const migrated = await run('migrate');
    expect(migrated).toMatchObject({ code: 0, stdout: '' });
  });

  afterAll(async () => {
    await sql?.end();
    await database?.drop();
  });

  it('migrate is idempotent', async () => {
    expect(await run('migrate')).toMatchObject({ code: 0, stdout: '' });
  });

  it('tenants create stores the tenant and prints its id', async () => {
    expect(await run('tenants', 'create', 'acme', '--name', 'Acme Inc')).toMatchObject({ code: 0, stdout: 'acme\n' });
    const { rows } = await sql.query('SELECT name FROM tenants WHERE id = $1', ['acme']);
    expect(rows).toEqual([{ name: 'Acme Inc' }]);
  });

  it('tenants create rejects a duplicate with one line and exit 1', async () => {
    await run('tenants', 'create', 'dup');
    const result = await run('tenants', 'create', 'dup');
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: "gateway: Tenant 'dup' already exists.\n" });
  });

  it('tenants create rejects an invalid tenant id as bad usage (exit 2)', async () => {
    const result = await run('tenants', 'create', 'Not_Valid!');
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain("Invalid tenant id 'Not_Valid!'");
    expect(result.stderr).toContain('Usage:');
  });

  it('keys create prints only the secret, and the stored hash matches it', async () => {
    await run('tenants', 'create', 'keys-co');
    const result = await run('keys', 'create', '--tenant', 'keys-co', '--role', 'developer');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^gwk_[A-Za-z0-9_-]+\n$/);
    const keyId = /^created key (key_[0-9a-z]+) for tenant keys-co \(role developer\)\n$/.exec(result.stderr)?.[1];
    expect(keyId).toBeDefined();
    const { rows } = await sql.query('SELECT tenant_id, role, secret_hash, revoked_at FROM api_keys WHERE id = $1', [keyId]);
    expect(rows).toEqual([{ tenant_id: 'keys-co', role: 'developer', secret_hash: hashApiKeySecret(result.stdout.trim()), revoked_at: null }]);
  });

  it('keys list shows id and role but never the secret, and keys revoke marks the key revoked', async () => {
    await run('tenants', 'create', 'revoker');
    const created = await run('keys', 'create', '--tenant', 'revoker', '--role', 'app');
    const secret = created.stdout.trim();
    const { rows } = await sql.query<{ id: string }>('SELECT id FROM api_keys WHERE tenant_id = $1', ['revoker']);
    const keyId = rows[0]?.id ?? '';

    const before = await run('keys', 'list', '--tenant', 'revoker');
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(new RegExp(`^${keyId}\\s+app\\s+\\S+Z\\s+-\\s+-\\s+-\\s+-\\s+-\\s+-$`, 'm'));
    expect(before.stdout).not.toContain(secret);
    expect(before.stdout).not.toContain(hashApiKeySecret(secret));

    expect(await run('keys', 'revoke', keyId)).toMatchObject({ code: 0, stdout: '' });
    const revoked = await sql.query('SELECT revoked_at FROM api_keys WHERE id = $1', [keyId]);
    expect(revoked.rows[0]?.revoked_at).toBeInstanceOf(Date);
    const after = await run('keys', 'list', '--tenant', 'revoker');
    expect(after.stdout).toMatch(new RegExp(`^${keyId}\\s+app\\s+\\S+Z\\s+\\S+Z\\s+-\\s+-\\s+-\\s+-\\s+-$`, 'm'));
  });

  it('keys create takes a name and an expiry in the future, and keys list shows them', async () => {
    await run('tenants', 'create', 'named-co');
    const created = await run('keys', 'create', '--tenant', 'named-co', '--role', 'app', '--name', 'nightly job', '--expires-at', '2099-01-31T00:00:00Z');
    expect(created.code).toBe(0);
    const listed = await run('keys', 'list', '--tenant', 'named-co');
    expect(listed.stdout).toMatch(/^key_\S+\s+app\s+\S+Z\s+-\s+2099-01-31T00:00:00\.000Z\s+-\s+-\s+-\s+nightly job$/m);
    for (const bad of ['2001-01-01T00:00:00Z', 'tomorrow']) {
      const refused = await run('keys', 'create', '--tenant', 'named-co', '--role', 'app', '--expires-at', bad);
      expect(refused).toMatchObject({ code: 2, stdout: '' });
      expect(refused.stderr).toContain(`Invalid --expires-at '${bad}'`);
    }
  });

  it("keys create takes the key's own limits, keys update changes or clears them, and keys list shows them", async () => {
    await run('tenants', 'create', 'limits-co');
    const created = await run('keys', 'create', '--tenant', 'limits-co', '--role', 'app', '--rpm', '5', '--max-concurrent', '2');
    expect(created.code).toBe(0);
    const keyId = /^created key (key_[0-9a-z]+)/.exec(created.stderr)?.[1] ?? '';
    const limits = async () => (await sql.query('SELECT requests_per_minute, tokens_per_minute, max_concurrent FROM api_keys WHERE id = $1', [keyId])).rows[0];
    expect(await limits()).toEqual({ requests_per_minute: 5, tokens_per_minute: null, max_concurrent: 2 });
    expect((await run('keys', 'list', '--tenant', 'limits-co')).stdout).toMatch(new RegExp(`^${keyId}\\s+app\\s+\\S+Z\\s+-\\s+-\\s+5\\s+-\\s+2\\s+-$`, 'm'));

    const updated = await run('keys', 'update', keyId, '--rpm', 'none', '--tpm', '1000');
    expect(updated).toMatchObject({ code: 0, stdout: '' });
    expect(updated.stderr).toContain(`updated key ${keyId}: rpm -, tpm 1000, max_concurrent 2`);
    expect(await limits()).toEqual({ requests_per_minute: null, tokens_per_minute: 1000, max_concurrent: 2 });
    const audit = await sql.query('SELECT action, details FROM audit_events WHERE target = $1 ORDER BY seq', [keyId]);
    expect(audit.rows.map((row) => [row.action, row.details])).toEqual([
      ['key.created', { role: 'app', name: null, expires_at: null, rpm: 5, max_concurrent: 2 }],
      ['key.updated', { rpm: null, tpm: 1000 }],
    ]);

    for (const args of [
      ['keys', 'create', '--tenant', 'limits-co', '--role', 'app', '--rpm', '0'],
      ['keys', 'create', '--tenant', 'limits-co', '--role', 'app', '--tpm', 'none'],
      ['keys', 'update', keyId, '--max-concurrent', '1.5'],
      ['keys', 'update', keyId],
    ]) {
      const refused = await run(...args);
      expect(refused, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(refused.stderr).toContain('Usage:');
    }
    expect(await run('keys', 'update', 'key_nope', '--rpm', '1')).toMatchObject({ code: 1, stderr: "gateway: Key 'key_nope' does not exist.\n" });
  });

  it('keys revoke of an unknown key fails with exit 1', async () => {
    expect(await run('keys', 'revoke', 'key_nope')).toMatchObject({ code: 1, stderr: "gateway: Key 'key_nope' does not exist.\n" });
  });

  it('keys create with a bad role is bad usage: exit 2, usage on stderr, nothing on stdout', async () => {
    const result = await run('keys', 'create', '--tenant', 'acme', '--role', 'owner');
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain("Invalid role 'owner'");
    expect(result.stderr).toContain('Usage:');
  });

  it('keys create for an unknown tenant fails with one line and exit 1', async () => {
    const result = await run('keys', 'create', '--tenant', 'ghost', '--role', 'admin');
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: "gateway: Tenant 'ghost' does not exist.\n" });
  });

  it('unknown commands and options are bad usage (exit 2)', async () => {
    expect(await run('tenants', 'delete', 'acme')).toMatchObject({ code: 2, stdout: '' });
    expect(await run('keys', 'list', '--tenant', 'acme', '--bogus')).toMatchObject({ code: 2, stdout: '' });
    expect(await run()).toMatchObject({ code: 2, stdout: '' });
  });

  it('an unreachable database is one line on stderr and exit 1', async () => {
    const result = await gateway('postgres://postgres@127.0.0.1:1/none', 'migrate');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^gateway: .+\n$/);
  });
});

describe('gateway CLI: prompts, budgets, credits, plans, audit', () => {
  let database: TestDatabase;
  let dir: string;
  const prefix = `tcli${Date.now().toString(36)}`;
  const run = (...args: string[]) => gatewayWith({ DATABASE_URL: database.url, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: prefix }, ...args);

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), 'gw-cli-'));
    expect((await run('migrate')).code).toBe(0);
    expect((await run('tenants', 'create', 'acme')).code).toBe(0);
  });

  afterAll(async () => {
    const redis = new Redis('redis://127.0.0.1:6379');
    await deletePrefix(redis, prefix);
    redis.disconnect();
    await database?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates, lists and rolls back prompt versions', async () => {
    const file = join(dir, 'greet.json');
    await writeFile(file, JSON.stringify({ messages: [{ role: 'user', content: 'Hi {{name}}' }], model: 'svc-flash' }));
    expect(await run('prompts', 'create', 'greet', '--tenant', 'acme', '--file', file)).toMatchObject({ code: 0, stdout: '1\n' });
    expect(await run('prompts', 'create', 'greet', '--tenant', 'acme', '--file', file, '--activate')).toMatchObject({ code: 0, stdout: '2\n' });
    expect((await run('prompts', 'activate', 'greet', '--tenant', 'acme', '--version', '1')).code).toBe(0);
    const list = await run('prompts', 'list', 'greet', '--tenant', 'acme');
    expect(list.stdout.split('\n')[0]).toMatch(/^ {2}2\t/);
    expect(list.stdout.split('\n')[1]).toMatch(/^\* 1\t/);
    expect((await run('prompts', 'activate', 'greet', '--tenant', 'acme', '--version', '9')).code).toBe(1);
  });

  it('keys revoke announces the tenant on the auth invalidation channel, so web processes refuse the key at once', async () => {
    const created = await run('keys', 'create', '--tenant', 'acme', '--role', 'app');
    const keyId = /created key (key_[0-9a-z]+)/.exec(created.stderr)?.[1] ?? '';
    const subscriber = new Redis('redis://127.0.0.1:6379');
    try {
      const announced = new Promise<string>((resolve) => subscriber.on('message', (_channel: string, message: string) => resolve(message)));
      await subscriber.subscribe(`${prefix}:invalidate:auth`);
      expect(await run('keys', 'revoke', keyId)).toMatchObject({ code: 0, stderr: `revoked key ${keyId}\n` });
      expect(await announced).toBe('acme');
    } finally {
      subscriber.disconnect();
    }
  });

  it('manages budgets, credits and plans, audits them, and verifies the chain', async () => {
    const created = await run('budgets', 'create', '--tenant', 'acme', '--window', 'day', '--limit', '5000000', '--feature', 'search');
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    expect((await run('budgets', 'list', '--tenant', 'acme')).stdout).toContain(`${id}\tday\t5000000\tsearch`);
    expect((await run('credits', 'top-up', '--tenant', 'acme', '--amount', '1000000')).code).toBe(0);
    expect((await run('plan', 'set', '--tenant', 'acme', '--rpm', '60', '--max-queued', '10')).code).toBe(0);
    expect((await run('budgets', 'delete', id, '--tenant', 'acme')).code).toBe(0);
    expect((await run('budgets', 'create', '--tenant', 'acme', '--window', 'week', '--limit', '5')).code).toBe(2);
    const verified = await run('audit', 'verify', '--tenant', 'acme');
    expect(verified).toMatchObject({ code: 0 });
    // tenant, 2 versions + 3 activations, key created and revoked, budget created and deleted, top-up, plan
    expect(verified.stdout).toMatch(/^ok: 12 events/);
  });
});
