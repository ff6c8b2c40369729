/**
 * Every console page, as each role sees it: what a developer, a tenant admin and an operator admin are
 * shown, and that the API refuses what the console hides; every page at phone width without sideways scrolling;
 * every page through axe-core; screenshots of every page at laptop and phone size (test-results/console/).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  horizontalOverflow,
  LAPTOP,
  nav,
  openConsolePage,
  OPERATOR_TENANT,
  pageReady,
  PAGES,
  PHONE,
  screenshot,
  signIn,
  startConsoleStack,
  TENANT,
  type ConsolePage,
  type ConsoleStack,
} from '../helpers/browser.ts';
import type { Page } from 'playwright-core';
import { call } from '../helpers/http.ts';
import { testCatalog } from '../helpers/test-catalog.ts';

let stack: ConsoleStack;

/** The page's globals that the keyboard test reads (these tests are typed without the DOM's library). */
interface BrowserGlobals {
  document: { activeElement: ({ tagName: string } & object) | null };
}

/** A loopback endpoint (WEBHOOK_ALLOW_PRIVATE_URLS) that nothing calls: no response ends in these tests. */
const SEEDED_WEBHOOK = 'http://127.0.0.1:9/seeded-hook';

/** What the operator's pages show, so that layout and accessibility are checked on tables with rows, not empty states. */
async function seed(): Promise<void> {
  const { origin, keys } = stack;
  for (const secret of [keys.operator, keys.admin])
    for (let i = 0; i < 2; i++) {
      const response = await call(origin, secret, 'POST', '/v1/chat/completions', { model: 'fake-gpt', messages: [{ role: 'user', content: `seed ${i}` }] });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    }
  for (const [content, activate] of [
    ['Summarise {{text}} in one line.', true],
    ['Summarise {{text}} in {{count}} words.', false],
  ] as const) {
    const response = await call(origin, keys.operator, 'POST', '/internal/v1/prompts/summary/versions', {
      messages: [{ role: 'user', content }],
      model: 'fake-gpt',
      activate,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
  }
  const budget = await call(origin, keys.operator, 'POST', '/internal/v1/budgets', { window: 'month', limit_micros: 5_000_000 });
  expect(budget.status, JSON.stringify(budget.body)).toBe(201);
  const webhook = await call(origin, keys.operator, 'POST', '/internal/v1/webhooks', { url: SEEDED_WEBHOOK, events: ['response.completed', 'batch.failed'] });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
}

beforeAll(async () => {
  stack = await startConsoleStack({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
  await seed();
});

afterEach(() => stack.finishTest());

afterAll(async () => {
  await stack?.close();
});

/** The names of the pages the signed-in principal's nav links to. */
async function linkNames(page: Page): Promise<string[]> {
  const shown: string[] = [];
  for (const target of PAGES) if ((await nav(page).getByRole('link', { name: target.name, exact: true }).count()) > 0) shown.push(target.name);
  return shown;
}

/**
 * Opens a page as a person would see most of it: the Prompts page with a prompt selected (versions, diff, try-it
 * form), Async work with a webhook endpoint's edit form open. By URL, or with `via: 'nav'` by its link (no reload:
 * what was injected into the document stays).
 */
async function showPage(page: Page, target: ConsolePage, via: 'url' | 'nav' = 'url'): Promise<void> {
  if (via === 'url') await openConsolePage(page, stack.origin, target);
  else {
    await nav(page).getByRole('link', { name: target.name, exact: true }).click();
    await pageReady(page, target.name);
  }
  if (target.path === 'async') {
    const row = page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('row').filter({ hasText: SEEDED_WEBHOOK });
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit webhook endpoint' }).waitFor();
  }
  if (target.path !== 'prompts') return;
  await page
    .getByRole('link', { name: 'summary', exact: true })
    .or(page.getByRole('button', { name: 'summary', exact: true }))
    .click();
  await page.getByRole('table', { name: 'Versions' }).waitFor();
  await page.getByRole('heading', { name: 'Try it' }).waitFor();
}

describe('roles', () => {
  it('a developer sees no page its role may not read, and the API refuses it an operator route with a 403 envelope', async () => {
    const tab = await stack.open();
    const { page } = tab;
    await signIn(page, stack.origin, stack.keys.developer);
    await expect.poll(() => page.getByText(`developer · ${TENANT}`).count()).toBeGreaterThan(0);
    // usage.read, budgets.read, prompts.read, batches.read; not keys.read nor audit.read (admin, auditor), nor the operator's.
    const allowed = ['Usage', 'Budgets', 'Prompts', 'Async work'];
    expect(await linkNames(page)).toEqual(allowed);
    // Typed in, a hidden page's URL shows "Not found", and the console asks the API nothing it would refuse (a refusal
    // would be a console error here).
    for (const target of PAGES.filter((candidate) => !allowed.includes(candidate.name))) {
      await page.goto(`${stack.origin}/console/${target.path}`);
      await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
      expect(await page.getByRole('heading', { level: 1, name: target.name, exact: true }).count(), target.name).toBe(0);
    }

    // The 403 below is logged by Chromium as a failed resource load: it is the point of the test.
    tab.expectFailure(/\/internal\/v1\/tenants$/);
    const refused = await page.evaluate(async () => {
      const token = (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem('gateway.token');
      const response = await fetch('/internal/v1/tenants', { headers: { authorization: `Bearer ${token}` } });
      return { status: response.status, requestId: response.headers.get('x-request-id'), body: await response.json() };
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: {
        message: expect.stringContaining("'developer'"),
        type: 'invalid_request_error',
        code: 'permission_denied',
        param: null,
        request_id: refused.requestId,
      },
    });
  });

  it("a tenant's admin sees its tenant's pages but none of the operator's", async () => {
    const { page } = await stack.open();
    await signIn(page, stack.origin, stack.keys.admin);
    await expect.poll(() => page.getByText(`admin · ${TENANT}`).count()).toBeGreaterThan(0);
    expect(await linkNames(page)).toEqual(PAGES.filter((target) => !target.operator).map((target) => target.name));
  });

  it("an operator admin sees every page; Tenants creates a tenant, Queue and Catalog show the gateway's state", async () => {
    const { page } = await stack.open();
    await signIn(page, stack.origin, stack.keys.operator);
    for (const target of PAGES) await nav(page).getByRole('link', { name: target.name, exact: true }).waitFor();

    await nav(page).getByRole('link', { name: 'Tenants', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Tenants' }).waitFor();
    const tenants = page.getByRole('table', { name: 'Tenants' });
    for (const id of [OPERATOR_TENANT, TENANT]) await tenants.getByRole('row').filter({ hasText: id }).first().waitFor();
    await page.getByLabel('Tenant ID', { exact: true }).fill('newco');
    await page.getByLabel('Name', { exact: true }).fill('New Co');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await tenants.getByRole('row').filter({ hasText: 'New Co' }).waitFor();
    const listed = await call(stack.origin, stack.keys.operator, 'GET', '/internal/v1/tenants');
    expect(listed.body.data).toContainEqual(expect.objectContaining({ id: 'newco', name: 'New Co', disabled: false }));

    await nav(page).getByRole('link', { name: 'Queue', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Queue' }).waitFor();
    // A header row and shard 0's.
    await expect.poll(() => page.getByRole('table', { name: 'Queue shards' }).getByRole('row').count()).toBeGreaterThanOrEqual(2);
    // The stack's one worker, seen by its heartbeat.
    await expect.poll(() => page.getByRole('table', { name: 'Workers' }).getByRole('row').count()).toBeGreaterThanOrEqual(2);
    expect(await page.getByRole('link', { name: 'Queue board' }).getAttribute('href')).toMatch(/queues/);

    await nav(page).getByRole('link', { name: 'Catalog', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Catalog' }).waitFor();
    const models = page.getByRole('table', { name: 'Models' });
    const fakeGpt = models.getByRole('row').filter({ hasText: 'fake-gpt' }).first();
    await fakeGpt.waitFor();
    await expect.poll(() => models.textContent()).toContain('closed');
    // Never a key or the name of its variable.
    expect(await page.locator('body').textContent()).not.toMatch(/api_key|API_KEY/);
  });
});

describe('catalog', () => {
  it('shows the tiers, each with its candidates in the order tried, linked to their models and with their circuits', async () => {
    const { page } = await stack.open();
    await signIn(page, stack.origin, stack.keys.operator);
    await openConsolePage(page, stack.origin, PAGES.find((target) => target.path === 'catalog') as ConsolePage);
    const tiers = page.getByRole('table', { name: 'Tiers' });
    const written = Object.entries(testCatalog(stack.upstream.url).tiers);
    expect(written.map(([name]) => name)).toEqual(['svc-flash', 'svc-standard', 'svc-pro']);
    // A header row, then one per tier in the catalog's order.
    await expect.poll(() => tiers.getByRole('row').count()).toBe(written.length + 1);
    for (const [i, [name, candidates]] of written.entries()) {
      const row = tiers.getByRole('row').nth(i + 1);
      expect(await row.getByRole('cell').first().textContent()).toBe(name);
      expect(await row.getByRole('listitem').getByRole('link').allTextContents()).toEqual(candidates);
      for (const item of await row.getByRole('listitem').all()) expect(await item.textContent()).toMatch(/: circuit closed$/);
    }
    // A candidate leads to its model's row.
    await tiers.getByRole('link', { name: 'fake-backup', exact: true }).click();
    expect(new URL(page.url()).hash).toBe('#model-fake-backup');
    expect(await page.getByRole('table', { name: 'Models' }).locator(':target').textContent()).toBe('fake-backup');
  });
});

describe('layout', () => {
  it('renders the sign-in page and every page at phone width (390×844) without horizontal scrolling; screenshots at phone and laptop size', async () => {
    const overflowing: string[] = [];
    for (const [size, viewport] of [
      ['phone', PHONE],
      ['laptop', LAPTOP],
    ] as const) {
      const { page } = await stack.open({ viewport });
      await page.goto(`${stack.origin}/console/`);
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      if ((await horizontalOverflow(page)) > 0) overflowing.push(`sign-in at ${size}: ${await horizontalOverflow(page)} px`);
      await screenshot(page, `sign-in-${size}`);
      await signIn(page, stack.origin, stack.keys.operator);
      for (const target of PAGES) {
        await showPage(page, target);
        const overflow = await horizontalOverflow(page);
        if (overflow > 0) overflowing.push(`${target.name} at ${size}: ${overflow} px`);
        await screenshot(page, `${target.path}-${size}`);
      }
    }
    // Laptop width is asserted too: a page too wide there is too wide anywhere.
    expect(overflowing).toEqual([]);
  }, 90_000);
});

describe('accessibility', () => {
  it('axe-core finds no serious or critical violation on the sign-in page or any page', async () => {
    // The console's CSP forbids the inline script axe is injected as; this context alone bypasses it.
    const { page } = await stack.open({ bypassCSP: true });
    const found: string[] = [];
    await page.goto(`${stack.origin}/console/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    found.push(...(await axeViolations(page)).map((violation) => `sign-in: ${violation}`));
    await signIn(page, stack.origin, stack.keys.operator);
    for (const target of PAGES) {
      await showPage(page, target, 'nav');
      found.push(...(await axeViolations(page)).map((violation) => `${target.name}: ${violation}`));
    }
    expect(found).toEqual([]);
  }, 90_000);

  it('works by keyboard alone: sign in, move to a page, create a key, and open and leave a confirmation', async () => {
    const { page } = await stack.open();
    await page.goto(`${stack.origin}/console/`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    /** Presses Tab until the focused element is the one `target` finds (at most `presses` times). */
    const tabTo = async (target: ReturnType<Page['getByRole']>, presses = 40) => {
      for (let i = 0; i < presses; i++) {
        if (await target.evaluate((element) => element === (globalThis as unknown as BrowserGlobals).document.activeElement)) return;
        await page.keyboard.press('Tab');
      }
      throw new Error(`Tab never reached ${target.toString()}`);
    };
    await tabTo(page.getByRole('textbox', { name: 'API key' }));
    await page.keyboard.type(stack.keys.admin);
    await page.keyboard.press('Enter');
    await tabTo(nav(page).getByRole('link', { name: 'Keys', exact: true }));
    await page.keyboard.press('Enter');
    await pageReady(page, 'Keys');
    // Navigation moves the focus to the page's heading, where a screen reader starts reading.
    expect(await page.evaluate(() => (globalThis as unknown as BrowserGlobals).document.activeElement?.tagName)).toBe('H1');
    await tabTo(page.getByRole('textbox', { name: 'Name', exact: true }));
    await page.keyboard.type('typed-by-keyboard');
    await tabTo(page.getByRole('button', { name: 'Create key' }));
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByLabel('New key secret').inputValue()).toMatch(/^gwk_/);
    const row = page.getByRole('row').filter({ hasText: 'typed-by-keyboard' });
    await tabTo(row.getByRole('button', { name: 'Revoke' }), 80);
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    // The dialog takes the focus (its safe choice first), and Escape leaves it without revoking.
    expect(await dialog.evaluate((element) => element.contains((globalThis as unknown as BrowserGlobals).document.activeElement))).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    const keys = await call(stack.origin, stack.keys.admin, 'GET', '/internal/v1/keys');
    const typed = (keys.body.data as Array<{ name: string | null; revoked_at: string | null }>).find((key) => key.name === 'typed-by-keyboard');
    expect(typed?.revoked_at).toBeNull();
  });
});
