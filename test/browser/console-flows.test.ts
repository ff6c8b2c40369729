/**
 * The console's tasks, done the way a person does them: signing in, reading usage, managing keys,
 * budgets and webhook endpoints, rolling a prompt back, trying a prompt with a streamed answer, verifying the audit chain. Each task is
 * checked against the API as well as on screen: the console must change what the gateway does, not only show it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { meterReading, nav, openConsolePage, PAGES, signIn, startConsoleStack, TENANT, type ConsolePage, type ConsoleStack } from '../helpers/browser.ts';
import { call, eventually } from '../helpers/http.ts';
import { startJwksServer, type JwksServer } from '../helpers/jwks-server.ts';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks/event-types.ts';

let idp: JwksServer;
let stack: ConsoleStack;

beforeAll(async () => {
  idp = await startJwksServer();
  // Private URLs: the webhook endpoints registered here are on loopback.
  stack = await startConsoleStack({ env: { JWT_ISSUERS: idp.issuer, JWKS_REFETCH_INTERVAL_MS: '0', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
});

afterEach(() => stack.finishTest());

afterAll(async () => {
  await stack?.close();
  await idp?.close();
});

function consolePage(name: string): ConsolePage {
  const found = PAGES.find((page) => page.name === name);
  if (!found) throw new Error(`no console page named ${name}`);
  return found;
}

function complete(secret: string, body: Record<string, unknown> = {}) {
  return call(stack.origin, secret, 'POST', '/v1/chat/completions', { model: 'fake-gpt', messages: [{ role: 'user', content: 'hi' }], ...body });
}

async function createPromptVersion(name: string, content: string, activate: boolean) {
  const created = await call(stack.origin, stack.keys.admin, 'POST', `/internal/v1/prompts/${name}/versions`, {
    messages: [{ role: 'user', content }],
    model: 'fake-gpt',
    activate,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
}

/** Opens a prompt from the Prompts page's list (a link or a button). */
async function selectPrompt(page: Page, name: string): Promise<void> {
  await openConsolePage(page, stack.origin, consolePage('Prompts'));
  await page
    .getByRole('link', { name, exact: true })
    .or(page.getByRole('button', { name, exact: true }))
    .click();
  await page.getByRole('table', { name: 'Versions' }).waitFor();
}

/** The accessible text of an element that may be a form field (input, textarea, output) or plain text. */
async function shownText(page: Page, label: string): Promise<string> {
  const element = page.getByLabel(label, { exact: true });
  return element.evaluate((el: unknown) => {
    const node = el as { value?: unknown; textContent: string | null };
    return typeof node.value === 'string' ? node.value : (node.textContent ?? '');
  });
}

describe('signing in', () => {
  it("a wrong key shows the envelope's message; the right one shows the principal; signing out forgets it", async () => {
    const tab = await stack.open();
    const { page } = tab;
    // The refused sign-in's 401 is logged by Chromium as a failed resource load.
    tab.expectFailure(/\/internal\/v1\/me$/);
    await page.goto(`${stack.origin}/console/`);
    await page.getByLabel('API key').fill('gw-not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The API key is invalid or has been revoked.');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Request ID: req_/);
    await signIn(page, stack.origin, stack.keys.admin);
    await expect.poll(() => page.getByText(`admin · ${TENANT}`).count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await nav(page).count()).toBe(0);
    // Signed out means the token is gone: a reload lands on the sign-in form again.
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });

  it('the "API key" field takes a pasted JWT too', async () => {
    const token = await idp.sign(idp.claims({ tenant: TENANT, role: 'auditor', sub: 'person-1' }));
    const { page } = await stack.open();
    await signIn(page, stack.origin, token);
    await expect.poll(() => page.getByText(`auditor · ${TENANT}`).count()).toBeGreaterThan(0);
    // audit.read and usage.read are the auditor's; keys.read is not.
    await nav(page).getByRole('link', { name: 'Audit', exact: true }).waitFor();
    expect(await nav(page).getByRole('link', { name: 'Keys', exact: true }).count()).toBe(0);
  });
});

describe('usage', () => {
  it('charts requests once traffic arrives, and lists them', async () => {
    // A tenant of its own: the other tests' traffic must not be what the chart shows.
    const chartAdmin = (await stack.gateway.issueKey('chart-co', 'admin')).secret;
    const { page } = await stack.open();
    await signIn(page, stack.origin, chartAdmin);
    await openConsolePage(page, stack.origin, consolePage('Usage'));
    await page.getByText(/^No /).first().waitFor();

    const sdk = new OpenAI({ baseURL: stack.gateway.baseURL, apiKey: chartAdmin, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await sdk.chat.completions.create({ model: 'fake-gpt', messages: [{ role: 'user', content: `request ${i}` }] });
    const since = new Date().toISOString().slice(0, 10);
    await eventually(
      async () => (await call(stack.origin, chartAdmin, 'GET', `/v1/usage?since=${since}`)).body.data?.length === 3,
      10_000,
      'three usage records',
    );

    await page.getByRole('button', { name: 'Apply' }).click();
    const requests = page.getByRole('figure', { name: 'Requests' });
    const chart = requests.getByRole('img');
    await chart.waitFor();
    expect(await chart.getAttribute('aria-label')).toBeTruthy();
    await expect.poll(() => chart.locator('rect, circle, path, polyline, polygon').count()).toBeGreaterThan(0);
    const recent = page.getByRole('table', { name: 'Recent requests' });
    // Three data rows below the header row, each of the model asked for.
    await expect.poll(() => recent.getByRole('row').filter({ hasText: 'fake-gpt' }).count()).toBe(3);
    await page
      .getByRole('link', { name: 'Download CSV' })
      .or(page.getByRole('button', { name: 'Download CSV' }))
      .waitFor();
  });
});

describe('keys', () => {
  it('creates a key whose secret is shown once and copies, which completes; revoked, the API refuses it with 401', async () => {
    const { page, context } = await stack.open();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await signIn(page, stack.origin, stack.keys.admin);
    await openConsolePage(page, stack.origin, consolePage('Keys'));
    const name = 'browser-made';
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Role', { exact: true }).selectOption('app');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('New key secret', { exact: true }).waitFor();
    const secret = (await shownText(page, 'New key secret')).trim();
    expect(secret).toMatch(/^\S{20,}$/);
    await page.getByText('shown once').first().waitFor();
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect
      .poll(() => page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()))
      .toBe(secret);

    expect((await complete(secret)).status).toBe(200);

    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: name });
    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await dialog.waitFor({ state: 'hidden' });
    let refused: Awaited<ReturnType<typeof complete>> | undefined;
    await eventually(
      async () => {
        refused = await complete(secret);
        return refused.status === 401;
      },
      5_000,
      'the revoked key refused',
    );
    expect(refused?.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect((await complete(stack.keys.admin)).status).toBe(200);
  });
});

describe('webhooks', () => {
  it('registers an endpoint whose secret is shown once, changes its URL and events, rotates its secret and deletes it through the confirmation', async () => {
    const { page } = await stack.open();
    await signIn(page, stack.origin, stack.keys.admin);
    await openConsolePage(page, stack.origin, consolePage('Async work'));
    const create = page.getByRole('region', { name: 'New webhook endpoint' });
    // The form offers every event type there is, in the server's order.
    const choices = await create.getByRole('group', { name: 'Events' }).locator('label').allTextContents();
    expect(choices.map((name) => name.trim())).toEqual([...WEBHOOK_EVENT_TYPES]);
    const first = 'http://127.0.0.1:9/console-hook';
    await create.getByLabel('URL', { exact: true }).fill(first);
    await create.getByRole('checkbox', { name: 'response.completed' }).check();
    await create.getByRole('checkbox', { name: 'batch.completed' }).check();
    await create.getByRole('button', { name: 'Create endpoint' }).click();
    const secretField = page.getByLabel('New endpoint secret', { exact: true });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_\S{20,}$/);
    await create.getByText('shown once').waitFor();

    const endpoints = page.getByRole('table', { name: 'Webhook endpoints' });
    await endpoints.getByRole('row').filter({ hasText: first }).waitFor();
    const listed = await call(stack.origin, stack.keys.admin, 'GET', '/internal/v1/webhooks');
    const endpoint = listed.body.data.find((candidate: { url: string }) => candidate.url === first);
    expect(endpoint).toMatchObject({ events: ['response.completed', 'batch.completed'], enabled: true });
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    // Once: a reload of the page shows the endpoint, never its secret again.
    await page.reload();
    await endpoints.getByRole('row').filter({ hasText: first }).waitFor();
    expect(await secretField.count()).toBe(0);

    const second = 'http://127.0.0.1:9/console-hook-v2';
    await endpoints.getByRole('row').filter({ hasText: first }).getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('region', { name: 'Edit webhook endpoint' });
    await edit.getByLabel('URL', { exact: true }).fill(second);
    await edit.getByRole('checkbox', { name: 'batch.completed' }).uncheck();
    await edit.getByRole('checkbox', { name: 'response.failed' }).check();
    await edit.getByRole('checkbox', { name: 'Enabled' }).uncheck();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    const row = endpoints.getByRole('row').filter({ hasText: second });
    await expect.poll(() => row.textContent()).toContain('response.completed, response.failed');
    expect(await row.getByRole('cell', { name: 'no', exact: true }).count()).toBe(1);
    await edit.waitFor({ state: 'detached' });
    // The closed form gives the focus back to the button that opened it.
    const focused = (element: unknown) => element === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement;
    expect(await row.getByRole('button', { name: 'Edit' }).evaluate(focused)).toBe(true);
    expect((await call(stack.origin, stack.keys.admin, 'GET', '/internal/v1/webhooks')).body.data).toContainEqual(
      expect.objectContaining({ id: endpoint.id, url: second, events: ['response.completed', 'response.failed'], enabled: false }),
    );

    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = page.getByLabel(`New secret of ${second}`, { exact: true });
    await rotated.waitFor();
    expect(await rotated.inputValue()).toMatch(/^whsec_/);
    expect(await rotated.inputValue()).not.toBe(secret);

    await row.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.getByRole('heading').textContent()).toBe(`Delete the webhook endpoint ${second}?`);
    await dialog.getByRole('button', { name: 'Delete endpoint' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await row.waitFor({ state: 'detached' });
    expect((await call(stack.origin, stack.keys.admin, 'GET', '/internal/v1/webhooks')).body.data).not.toContainEqual(
      expect.objectContaining({ id: endpoint.id }),
    );
    expect((await call(stack.origin, stack.keys.admin, 'GET', `/internal/v1/webhooks/${endpoint.id}/deliveries`)).status).toBe(404);
  });
});

describe('budgets', () => {
  it('a budget made in the console trips: the gateway answers 402 insufficient_credits and the meter shows it spent; deleted, requests run again', async () => {
    // A tenant of its own: a tripped budget refuses every later request of its tenant.
    const spender = (await stack.gateway.issueKey('budget-co', 'admin')).secret;
    const { page } = await stack.open();
    await signIn(page, stack.origin, spender);
    await openConsolePage(page, stack.origin, consolePage('Budgets'));
    // "Name" stays empty: budgets carry no name in the API, and the console labels an unnamed one by scope and window.
    // 0.001 USD: 1,000 micro-units.
    await page.getByLabel('Limit (USD)', { exact: true }).fill('0.001');
    await page.getByLabel('Window', { exact: true }).selectOption({ label: 'Day' });
    await page.getByRole('button', { name: 'Create budget' }).click();
    await eventually(async () => (await call(stack.origin, spender, 'GET', '/v1/budgets')).body.data?.length === 1, 5_000, 'the budget created');
    const created = (await call(stack.origin, spender, 'GET', '/v1/budgets')).body.data[0];
    expect(created).toMatchObject({ window: 'day', limit_micros: 1_000, scope: 'tenant' });

    // Each answer reports 610 tokens: 10 × 1 + 600 × 2 = 1,210 micro-units, past the limit in one request, whose
    // reservation (its prompt and 50 max_tokens) still fits; the cost is charged in full, so the next one is refused.
    const usage = { prompt_tokens: 10, completion_tokens: 600, total_tokens: 610 };
    stack.upstream.script(Array.from({ length: 5 }, () => ({ kind: 'ok' as const, usage })));
    const statuses: number[] = [];
    let refusal: any;
    for (let i = 0; i < 5 && refusal === undefined; i++) {
      const response = await complete(spender, { max_tokens: 50 });
      statuses.push(response.status);
      if (response.status !== 200) refusal = response;
    }
    stack.upstream.reset();
    expect(statuses[0], 'the first request fits the budget').toBe(200);
    expect(refusal?.status, `statuses: ${statuses.join(', ')}`).toBe(402);
    expect(refusal.body.error).toMatchObject({ type: 'invalid_request_error', code: 'insufficient_credits' });
    expect(refusal.body.error.message).toMatch(/daily budget/);

    await page.reload();
    const label = 'Tenant · day';
    const meter = page.getByRole('meter', { name: label }).or(page.getByRole('progressbar', { name: label }));
    await meter.waitFor();
    const reading = await meterReading(meter);
    expect(reading.value, JSON.stringify(reading)).toBeGreaterThanOrEqual(reading.max);
    await page.getByText('Credit balance').first().waitFor();

    await page.getByRole('table', { name: 'Budgets' }).getByRole('row').filter({ hasText: label }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete budget' }).click();
    await meter.waitFor({ state: 'detached' });
    await eventually(async () => (await complete(spender, { max_tokens: 50 })).status === 200, 5_000, 'requests run once the budget is deleted');
  });
});

describe('prompts', () => {
  it('rolls a prompt back to its older version: Activate → Activate version, and the API serves that version', async () => {
    await createPromptVersion('greeting', 'Say hello to {{name}}.', true);
    await createPromptVersion('greeting', 'Say goodbye to {{name}}.', true);
    expect((await call(stack.origin, stack.keys.admin, 'GET', '/v1/prompts/greeting')).body.version).toBe(2);

    const { page } = await stack.open();
    await signIn(page, stack.origin, stack.keys.admin);
    await selectPrompt(page, 'greeting');
    // The two versions compared by default: the older one's line taken out, the newer one's put in.
    const diff = page.getByLabel('Diff', { exact: true });
    await expect.poll(() => diff.textContent()).toContain('Say hello to {{name}}.');
    expect(await diff.textContent()).toContain('Say goodbye to {{name}}.');
    const versions = page.getByRole('table', { name: 'Versions' });
    const first = versions.getByRole('row').filter({ has: page.getByRole('cell', { name: '1', exact: true }) });
    // Only the inactive version offers Activate.
    expect(await versions.getByRole('button', { name: 'Activate' }).count()).toBe(1);
    await first.getByRole('button', { name: 'Activate' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Activate version' }).click();
    await expect.poll(() => first.textContent()).toContain('active');
    await eventually(async () => (await call(stack.origin, stack.keys.admin, 'GET', '/v1/prompts/greeting')).body.version === 1, 5_000, 'version 1 served');
    const served = await call(stack.origin, stack.keys.admin, 'GET', '/v1/prompts/greeting');
    expect(served.body.messages[0].content).toBe('Say hello to {{name}}.');
  });

  it('tries a prompt: the streamed answer fills the "Answer" region as it arrives', async () => {
    await createPromptVersion('story', 'Tell a story about {{topic}}.', true);
    const { page } = await stack.open();
    await signIn(page, stack.origin, stack.keys.admin);
    await selectPrompt(page, 'story');
    await page.getByRole('heading', { name: 'Try it' }).waitFor();
    await page.getByLabel('topic', { exact: true }).fill('queues');
    // Six pieces 250 ms apart ("w0 " … "w5 "): a console that shows the answer only at the end sees one text, not several.
    stack.upstream.script([{ kind: 'slow-stream', chunkDelayMs: 250, chunks: 6 }]);
    const answer = page.getByLabel('Answer', { exact: true });
    expect(await answer.getAttribute('aria-live')).toBe('polite');
    await answer.evaluate((element: unknown) => {
      const el = element as { textContent: string | null };
      const seen: string[] = [];
      (globalThis as unknown as { answersSeen: string[] }).answersSeen = seen;
      const note = () => {
        const text = el.textContent ?? '';
        if (text !== seen.at(-1)) seen.push(text);
      };
      const Observer = (globalThis as unknown as { MutationObserver: new (callback: () => void) => { observe(node: unknown, options: object): void } })
        .MutationObserver;
      new Observer(note).observe(element, { subtree: true, childList: true, characterData: true });
    });
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => answer.textContent(), { timeout: 10_000 }).toMatch(/w0 w1 w2 w3 w4 w5/);
    const seen = await page.evaluate(() => (globalThis as unknown as { answersSeen: string[] }).answersSeen);
    const partial = seen.filter((text) => text.includes('w0') && !text.includes('w5'));
    expect(partial.length, `texts seen: ${JSON.stringify(seen)}`).toBeGreaterThan(0);
    expect(stack.upstream.requests.at(-1)?.body).toMatchObject({ stream: true, messages: [{ content: 'Tell a story about queues.' }] });
  });
});

describe('audit', () => {
  it('lists events and verifies the chain', async () => {
    await createPromptVersion('audited', 'An audited prompt.', true);
    const { page } = await stack.open();
    await signIn(page, stack.origin, stack.keys.admin);
    await openConsolePage(page, stack.origin, consolePage('Audit'));
    const events = page.getByRole('table', { name: 'Audit events' });
    await expect.poll(() => events.getByRole('row').filter({ hasText: 'prompt.activated' }).count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Verify chain' }).click();
    const result = page.getByRole('status').filter({ hasText: /^Chain / });
    await expect.poll(() => result.textContent(), { timeout: 10_000 }).toMatch(/^Chain verified/);
  });

  it('reads a list longer than a page with "Load more", and a changed filter starts it again', async () => {
    // More key.created events than the console's page of 100.
    for (let i = 0; i < 105; i++) {
      const created = await call(stack.origin, stack.keys.admin, 'POST', '/internal/v1/keys', { role: 'app', name: `paged-${i}` });
      expect(created.status).toBe(201);
    }
    const { page } = await stack.open();
    await signIn(page, stack.origin, stack.keys.admin);
    await openConsolePage(page, stack.origin, consolePage('Audit'));
    await page.getByLabel('Action').fill('key.created');
    await page.getByRole('button', { name: 'Apply' }).click();
    const rows = page.getByRole('table', { name: 'Audit events' }).getByRole('row').filter({ hasText: 'key.created' });
    await expect.poll(() => rows.count()).toBe(100);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => rows.count()).toBeGreaterThanOrEqual(105);
    await expect.poll(() => page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    await page.getByLabel('Action').fill('prompt.activated');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => rows.count()).toBe(0);
  });
});
