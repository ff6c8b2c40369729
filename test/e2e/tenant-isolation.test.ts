/**
 * Tenant isolation end to end: tenants A and B each have prompts, usage records, a budget,
 * audit events, used idempotency keys and keys of every role. A principal of B, with every
 * role that may call each endpoint, never sees, counts or changes anything of A (and a few
 * reverse checks for A). Real web and worker processes, real Redis and PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayUnderTest } from '../helpers/gateway-processes.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { testCatalog } from '../helpers/test-catalog.ts';
import { call, eventually, type JsonResponse } from '../helpers/http.ts';
import type { Role } from '../../src/infra/store/repository.ts';

const A = 'tenant-a';
const B = 'tenant-b';
type Tenant = typeof A | typeof B;
const ROLES = ['admin', 'developer', 'app', 'auditor'] as const satisfies readonly Role[];
const today = new Date().toISOString().slice(0, 10);

let upstream: FakeUpstream;
let gateway: GatewayUnderTest;
const keys = {} as Record<Tenant, Record<Role, { id: string; secret: string }>>;
const budgetIds = {} as Record<Tenant, string>;
/** Request ids and provider-reported totals of each tenant's completions. */
const completions: Record<Tenant, { requestIds: string[]; totalTokens: number }> = {
  [A]: { requestIds: [], totalTokens: 0 },
  [B]: { requestIds: [], totalTokens: 0 },
};
/** Idempotency keys A used first, with A's bodies. */
const idem = { differentBody: randomUUID(), sameBody: randomUUID() };
const aBody = { model: 'fake-gpt', messages: [{ role: 'user', content: 'alpha asks one thing' }] };
const bBody = { model: 'fake-gpt', messages: [{ role: 'user', content: 'beta asks something else entirely here' }] };

function req(tenant: Tenant, role: Role, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<JsonResponse> {
  return call(gateway.origin, keys[tenant][role].secret, method, path, body, headers);
}

async function complete(tenant: Tenant, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const response = await req(tenant, 'app', 'POST', '/v1/chat/completions', body, headers);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  if (response.headers.get('idempotent-replayed') !== 'true') {
    completions[tenant].requestIds.push(response.body.request_id ?? response.headers.get('x-request-id'));
    completions[tenant].totalTokens += response.body.usage.total_tokens as number;
  }
  return response;
}

async function createPrompt(tenant: Tenant, name: string, content: string, activate = false): Promise<void> {
  const created = await req(tenant, 'admin', 'POST', `/internal/v1/prompts/${name}/versions`, {
    messages: [{ role: 'user', content }],
    model: 'fake-gpt',
    activate,
  });
  expect(created.status).toBe(201);
}

async function usage(tenant: Tenant, role: Role, query = ''): Promise<JsonResponse> {
  const response = await req(tenant, role, 'GET', `/v1/usage?since=${today}&limit=1000${query}`);
  expect(response.status).toBe(200);
  return response;
}

async function auditEvents(tenant: Tenant, role: Role, query = ''): Promise<Array<{ actor: string; action: string; target: string }>> {
  const response = await req(tenant, role, 'GET', `/v1/audit?limit=1000${query}`);
  expect(response.status).toBe(200);
  expect(response.body.has_more).toBe(false);
  return response.body.data;
}

function keyIds(tenant: Tenant): string[] {
  return ROLES.map((role) => keys[tenant][role].id);
}

/** Strings that identify tenant `t`'s data: its key ids, its own prompt, its budget. */
function markers(tenant: Tenant): string[] {
  return [...keyIds(tenant), tenant === A ? 'only-a' : 'only-b', budgetIds[tenant], tenant];
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { SETTINGS_CACHE_TTL_MS: '100', KEY_CACHE_TTL_MS: '200' } });
  for (const tenant of [A, B] as const) {
    keys[tenant] = {} as Record<Role, { id: string; secret: string }>;
    for (const role of ROLES) keys[tenant][role] = await gateway.issueKey(tenant, role);
  }
  await gateway.issueKey('operator', 'admin');

  // Prompts: one of each tenant's own, and one name both use with different content.
  await createPrompt(A, 'only-a', 'A secret {{x}}');
  await createPrompt(A, 'only-a', 'A secret, second version {{x}}', true);
  await createPrompt(A, 'shared', 'A shared text');
  await createPrompt(B, 'only-b', 'B secret {{x}}');
  await createPrompt(B, 'shared', 'B shared text');

  // Budgets: the same window, so that a shared counter would show.
  for (const tenant of [A, B] as const) {
    const created = await req(tenant, 'admin', 'POST', '/internal/v1/budgets', { window: 'day', limit_micros: 1_000_000_000 });
    expect(created.status).toBe(201);
    budgetIds[tenant] = created.body.id;
  }

  // Completions: A 3 with feature 'feat-a', B 2 with feature 'feat-b'; token counts differ.
  upstream.script([
    { kind: 'ok', text: 'one two three' },
    { kind: 'ok', text: 'one two three four five six seven' },
    { kind: 'ok', text: 'a b c d e f g h i j k' },
    { kind: 'ok', text: 'b one' },
    { kind: 'ok', text: 'b two three' },
  ]);
  for (let i = 0; i < 3; i++)
    await complete(A, { ...aBody, messages: [{ role: 'user', content: `alpha request ${i} `.repeat(i + 1) }] }, { 'x-feature': 'feat-a' });
  for (let i = 0; i < 2; i++) await complete(B, { ...bBody, messages: [{ role: 'user', content: `beta ${i}` }] }, { 'x-feature': 'feat-b' });

  // A uses two idempotency keys first (B reuses them in the idempotency tests).
  await complete(A, aBody, { 'idempotency-key': idem.differentBody });
  await complete(A, aBody, { 'idempotency-key': idem.sameBody });

  // Denials are audited for the denied key's tenant.
  // A gets many more denials than B, so that the two chains' lengths differ clearly.
  for (let i = 0; i < 8; i++) expect((await req(A, 'app', 'GET', '/v1/audit')).status).toBe(403);
  expect((await req(B, 'app', 'GET', '/v1/audit')).status).toBe(403);

  await eventually(
    async () => (await usage(A, 'admin')).body.data.length === 5 && (await usage(B, 'admin')).body.data.length === 2,
    10_000,
    'usage records of both tenants',
  );
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('prompts', () => {
  it.each(['admin', 'developer'] as const)("B's %s: GET /v1/prompts of A's prompt → 404; of a shared name → B's own", async (role) => {
    const theirs = await req(B, role, 'GET', '/v1/prompts/only-a');
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('prompt_not_found');
    expect(JSON.stringify(theirs.body)).not.toContain('A secret');
    const shared = await req(B, role, 'GET', '/v1/prompts/shared');
    expect(shared.status).toBe(200);
    expect(shared.body).toMatchObject({ name: 'shared', version: 1, messages: [{ content: 'B shared text' }] });
  });

  it("B's app: a completion naming A's prompt → 404 prompt_not_found, the provider is not called", async () => {
    const before = upstream.requests.length;
    const response = await req(B, 'app', 'POST', '/v1/chat/completions', { prompt: 'only-a', variables: { x: 'y' } });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('prompt_not_found');
    expect(upstream.requests.length).toBe(before);
  });

  it("B's admin: A's prompt versions and activation → 404; a version B creates under A's name is B's alone", async () => {
    expect((await req(B, 'admin', 'GET', '/internal/v1/prompts/only-a/versions')).status).toBe(404);
    const activate = await req(B, 'admin', 'POST', '/internal/v1/prompts/only-a/activate', { version: 1 });
    expect(activate.status).toBe(404);
    expect(activate.body.error.code).toBe('prompt_not_found');
    // A's active version is still 2: B's activate of version 1 did nothing to A.
    expect((await req(A, 'developer', 'GET', '/v1/prompts/only-a')).body).toMatchObject({ version: 2 });

    const created = await req(B, 'admin', 'POST', '/internal/v1/prompts/shared/versions', {
      messages: [{ role: 'user', content: 'B shared v2' }],
      model: 'fake-gpt',
      activate: true,
    });
    expect(created.body).toMatchObject({ name: 'shared', version: 2, active: true });
    const aVersions = await req(A, 'admin', 'GET', '/internal/v1/prompts/shared/versions');
    expect(aVersions.body).toMatchObject({ active_version: 1, data: [{ version: 1, messages: [{ content: 'A shared text' }] }] });
    expect(aVersions.body.data).toHaveLength(1);
    await eventually(
      async () => (await req(A, 'developer', 'GET', '/v1/prompts/shared')).body.messages?.[0]?.content === 'A shared text',
      2000,
      "A's shared prompt",
    );
  });

  it("reverse: A's developer cannot read B's prompt, A's admin cannot list its versions", async () => {
    expect((await req(A, 'developer', 'GET', '/v1/prompts/only-b')).status).toBe(404);
    expect((await req(A, 'admin', 'GET', '/internal/v1/prompts/only-b/versions')).status).toBe(404);
  });
});

describe('usage', () => {
  it.each(['admin', 'developer', 'auditor'] as const)("B's %s: records, filters and group_by sums exclude A", async (role) => {
    const records = (await usage(B, role)).body.data as Array<{ request_id: string; key_id: string; total_tokens: number; feature: string | null }>;
    expect(records.map((r) => r.request_id).sort()).toEqual([...completions[B].requestIds].sort());
    expect(records.every((r) => keyIds(B).includes(r.key_id))).toBe(true);
    const total = records.reduce((sum, r) => sum + r.total_tokens, 0);
    expect(total).toBe(completions[B].totalTokens);

    for (const groupBy of ['day', 'model', 'feature'] as const) {
      const groups = (await usage(B, role, `&group_by=${groupBy}`)).body.data as Array<Record<string, unknown> & { requests: number; total_tokens: number }>;
      expect(
        groups.reduce((sum, g) => sum + g.requests, 0),
        groupBy,
      ).toBe(completions[B].requestIds.length);
      expect(
        groups.reduce((sum, g) => sum + g.total_tokens, 0),
        groupBy,
      ).toBe(completions[B].totalTokens);
      if (groupBy === 'feature') expect(groups.map((g) => g.feature)).not.toContain('feat-a');
    }

    expect((await usage(B, role, '&feature=feat-a')).body.data).toEqual([]);
    expect((await usage(B, role, `&key_id=${keys[A].app.id}`)).body.data).toEqual([]);
  });

  it("reverse: A's records are A's only, and their sum is A's", async () => {
    const records = (await usage(A, 'auditor')).body.data as Array<{ request_id: string; total_tokens: number }>;
    expect(records.map((r) => r.request_id).sort()).toEqual([...completions[A].requestIds].sort());
    expect(records.reduce((sum, r) => sum + r.total_tokens, 0)).toBe(completions[A].totalTokens);
    expect((await usage(A, 'developer', `&key_id=${keys[B].app.id}`)).body.data).toEqual([]);
    expect(completions[A].totalTokens).not.toBe(completions[B].totalTokens);
  });
});

describe('budgets', () => {
  async function costOf(tenant: Tenant): Promise<number> {
    return ((await usage(tenant, 'admin')).body.data as Array<{ cost_micros: number }>).reduce((sum, r) => sum + r.cost_micros, 0);
  }

  it.each(['admin', 'developer', 'auditor'] as const)("B's %s sees only B's budget, spent by B's requests alone", async (role) => {
    await eventually(async () => (await req(B, role, 'GET', '/v1/budgets')).body.data[0]?.reserved_micros === 0, 5000, 'settled');
    const budgets = (await req(B, role, 'GET', '/v1/budgets')).body;
    expect(budgets.data.map((b: { id: string }) => b.id)).toEqual([budgetIds[B]]);
    expect(budgets.data[0].spent_micros).toBe(await costOf(B));
    expect(budgets.credit).toBeNull();
  });

  it("B's admin: DELETE of A's budget → 404, A's budget is still there and still counts A's spend", async () => {
    const deleted = await req(B, 'admin', 'DELETE', `/internal/v1/budgets/${budgetIds[A]}`);
    expect(deleted.status).toBe(404);
    expect(deleted.body.error.code).toBe('not_found');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const budgets = (await req(A, 'auditor', 'GET', '/v1/budgets')).body;
    expect(budgets.data.map((b: { id: string }) => b.id)).toEqual([budgetIds[A]]);
    expect(budgets.data[0].spent_micros).toBe(await costOf(A));
    expect(await costOf(A)).not.toBe(await costOf(B));
  });

  it("reverse: A's admin cannot delete B's budget", async () => {
    expect((await req(A, 'admin', 'DELETE', `/internal/v1/budgets/${budgetIds[B]}`)).status).toBe(404);
    expect((await req(B, 'developer', 'GET', '/v1/budgets')).body.data.map((b: { id: string }) => b.id)).toEqual([budgetIds[B]]);
  });

  it("B's admin cannot top up A's credits or set A's plan (403); A has no credit account afterwards", async () => {
    const topUp = await req(B, 'admin', 'POST', `/internal/v1/tenants/${A}/credits`, { amount_micros: 1_000_000 });
    expect(topUp.status).toBe(403);
    expect(topUp.body.error.code).toBe('permission_denied');
    expect((await req(B, 'admin', 'PUT', `/internal/v1/tenants/${A}/plan`, { requests_per_minute: 1 })).status).toBe(403);
    expect((await req(A, 'admin', 'POST', `/internal/v1/tenants/${B}/credits`, { amount_micros: 1_000_000 })).status).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await req(A, 'admin', 'GET', '/v1/budgets')).body.credit).toBeNull();
  });
});

describe('idempotency', () => {
  it("B reusing A's Idempotency-Key with a different body → 200, not 422, not a replay; A's record is intact", async () => {
    const before = upstream.requests.length;
    const response = await complete(B, bBody, { 'idempotency-key': idem.differentBody });
    expect(response.headers.get('idempotent-replayed')).toBeNull();
    expect(upstream.requests.length).toBe(before + 1);
    expect(upstream.requests.at(-1)?.body).toMatchObject({ messages: [{ content: bBody.messages[0]?.content }] });
    // A's claim on the key is still A's: A's retry replays, A's key with B's body is rejected.
    const replay = await req(A, 'app', 'POST', '/v1/chat/completions', aBody, { 'idempotency-key': idem.differentBody });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await req(A, 'app', 'POST', '/v1/chat/completions', bBody, { 'idempotency-key': idem.differentBody })).status).toBe(422);
  });

  it("B reusing A's key with A's very body → its own completion, not A's replayed answer", async () => {
    const before = upstream.requests.length;
    const response = await complete(B, aBody, { 'idempotency-key': idem.sameBody });
    expect(response.headers.get('idempotent-replayed')).toBeNull();
    expect(upstream.requests.length).toBe(before + 1);
    await eventually(async () => (await usage(B, 'admin')).body.data.length === completions[B].requestIds.length, 5000, "B's records");
    expect((await usage(A, 'admin')).body.data).toHaveLength(5);
  });
});

describe('audit', () => {
  function expectNoneOf(tenant: Tenant, events: unknown[]): void {
    const text = JSON.stringify(events);
    for (const marker of markers(tenant)) expect(text, `found ${marker}`).not.toContain(marker);
  }

  it.each(['admin', 'auditor'] as const)("B's %s: the audit log holds B's events only", async (role) => {
    const events = await auditEvents(B, role);
    expect(events.length).toBeGreaterThan(0);
    expect(events.map((e) => e.action)).toEqual(expect.arrayContaining(['prompt.version_created', 'budget.created', 'auth.denied']));
    expect(events.every((e) => keyIds(B).includes(e.actor))).toBe(true);
    expectNoneOf(A, events);
    expect(await auditEvents(B, role, `&actor=${keys[A].admin.id}`)).toEqual([]);
  });

  it.each(['admin', 'auditor'] as const)("B's %s: audit verify counts B's chain only", async (role) => {
    await eventually(
      async () => {
        const verify = await req(B, role, 'GET', '/internal/v1/audit/verify');
        return verify.body.ok === true && verify.body.events === (await auditEvents(B, 'auditor')).length;
      },
      5000,
      "B's verify counting B's events",
    );
    const aCount = (await req(A, 'auditor', 'GET', '/internal/v1/audit/verify')).body.events;
    expect(aCount).toBe((await auditEvents(A, 'auditor')).length);
    expect((await req(B, role, 'GET', '/internal/v1/audit/verify')).body.events).toBeLessThan(aCount);
  });

  it("reverse: A's audit log holds nothing of B", async () => {
    const events = await auditEvents(A, 'admin');
    expect(events.map((e) => e.action)).toEqual(expect.arrayContaining(['prompt.version_created', 'prompt.activated', 'budget.created', 'auth.denied']));
    expect(events.every((e) => keyIds(A).includes(e.actor))).toBe(true);
    expectNoneOf(B, events);
  });
});

describe('PII policy', () => {
  it("B's admin changing B's PII policy leaves A's as it was", async () => {
    const before = (await req(A, 'admin', 'GET', '/internal/v1/pii-policy')).body;
    const next = before.mode === 'mask' ? 'flag' : 'mask';
    const changed = await req(B, 'admin', 'PUT', '/internal/v1/pii-policy', { mode: next });
    expect(changed.status).toBe(200);
    expect((await req(B, 'admin', 'GET', '/internal/v1/pii-policy')).body.mode).toBe(next);
    expect((await req(A, 'admin', 'GET', '/internal/v1/pii-policy')).body).toEqual(before);
    expect(await auditEvents(A, 'auditor', '&action=policy.pii_updated')).toEqual([]);
  });
});
