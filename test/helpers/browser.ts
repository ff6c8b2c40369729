/**
 * The console's browser tests (test/browser/): the system's Chromium driven by playwright-core against real web and
 * worker processes (test/helpers/gateway-processes.ts) serving /console from dist/console. One browser and one
 * gateway stack per file; each test opens its own contexts, and any console error or uncaught exception in one of
 * them fails that test (`finishTest`, from afterEach).
 */
import { access, constants, mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.ts';
import { startGateway, type GatewayUnderTest } from './gateway-processes.ts';
import { testCatalog } from './test-catalog.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const CONSOLE_INDEX = join(ROOT, 'dist/console/index.html');
/** Where the screenshots go (git-ignored): the reviewer looks at them, no test compares them. */
export const SCREENSHOT_DIR = join(ROOT, 'test-results/console');

export const LAPTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/** A console page: its path under /console/, its nav link and h1 (the same name), and whether only operator admins see it. */
export interface ConsolePage {
  path: string;
  name: string;
  operator: boolean;
}

export const PAGES: readonly ConsolePage[] = [
  { path: 'usage', name: 'Usage', operator: false },
  { path: 'budgets', name: 'Budgets', operator: false },
  { path: 'keys', name: 'Keys', operator: false },
  { path: 'prompts', name: 'Prompts', operator: false },
  { path: 'audit', name: 'Audit', operator: false },
  { path: 'async', name: 'Async work', operator: false },
  { path: 'tenants', name: 'Tenants', operator: true },
  { path: 'queue', name: 'Queue', operator: true },
  { path: 'catalog', name: 'Catalog', operator: true },
];

/** The tenant whose admins hold the operator permissions (OPERATOR_TENANT's default). */
export const OPERATOR_TENANT = 'operator';
/** The ordinary tenant the flows run as. */
export const TENANT = 'acme';

/** The Chromium to drive: CHROMIUM_PATH, else Debian's package. Throws, naming what to do, when there is none. */
export async function chromiumPath(): Promise<string> {
  const path = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  try {
    await access(path, constants.X_OK);
  } catch (error) {
    throw new Error(
      `The browser tests need Chromium and found none at ${path} (${(error as Error).message}). ` +
        "Install Debian's package (`apt-get install -y chromium`) or point CHROMIUM_PATH at a Chromium binary; no browser is downloaded.",
      { cause: error },
    );
  }
  return path;
}

/** Throws unless `npm run build:console` has built the console: the web process would answer /console with 503. */
export async function assertConsoleBuilt(): Promise<void> {
  try {
    await access(CONSOLE_INDEX, constants.R_OK);
  } catch (error) {
    throw new Error(`${CONSOLE_INDEX} is missing: run \`npm run build:console\` before the browser tests (\`npm test\` does).`, { cause: error });
  }
}

export async function launchChromium(): Promise<Browser> {
  const executablePath = await chromiumPath();
  // Chromium refuses its sandbox to root (CI and this machine run tests as root).
  const args = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
  return chromium.launch({ executablePath, headless: true, args });
}

/** What went wrong in a page: console errors (with the resource they name) and uncaught exceptions. */
interface PageProblem {
  text: string;
  url: string;
}

/** A context and its first page, with what the page reported. */
export interface Tab {
  context: BrowserContext;
  page: Page;
  problems: PageProblem[];
  /** Console errors about this URL pattern are expected (a request the test makes fail on purpose). */
  expectFailure(url: RegExp): void;
}

/** One file's stack: fake upstream, gateway (web + worker), Chromium, and the keys the tests sign in with. */
export interface ConsoleStack {
  upstream: FakeUpstream;
  gateway: GatewayUnderTest;
  browser: Browser;
  origin: string;
  /** Secrets: the operator tenant's admin, and TENANT's admin and developer. */
  keys: { operator: string; admin: string; developer: string };
  /** Opens a fresh context (its own sessionStorage) and page, watched for errors. */
  open(options?: BrowserContextOptions): Promise<Tab>;
  /** Closes the test's contexts; fails when any of their pages logged an error not expected. For afterEach. */
  finishTest(): Promise<void>;
  close(): Promise<void>;
}

/** `env`: more of the gateway's environment (a JWT issuer, say). */
export async function startConsoleStack(options: { env?: Record<string, string> } = {}): Promise<ConsoleStack> {
  // Both checks come first, so that a missing build or browser fails in a second with its reason, not after a gateway started.
  await assertConsoleBuilt();
  await chromiumPath();
  const upstream = await startFakeUpstream();
  let gateway: GatewayUnderTest | undefined;
  let browser: Browser | undefined;
  try {
    // Short caches: a revoked key and a new budget reach the web process within a test's patience.
    gateway = await startGateway({ catalog: testCatalog(upstream.url), env: { KEY_CACHE_TTL_MS: '200', SETTINGS_CACHE_TTL_MS: '100', ...options.env } });
    const keys = {
      operator: (await gateway.issueKey(OPERATOR_TENANT, 'admin')).secret,
      admin: (await gateway.issueKey(TENANT, 'admin')).secret,
      developer: (await gateway.issueKey(TENANT, 'developer')).secret,
    };
    browser = await launchChromium();
    const started = { gateway, browser };
    let tabs: Tab[] = [];
    return {
      upstream,
      gateway,
      browser,
      origin: gateway.origin,
      keys,
      async open(contextOptions = {}) {
        const context = await started.browser.newContext({ viewport: LAPTOP, ...contextOptions });
        const page = await context.newPage();
        const tab = watch(context, page);
        tabs.push(tab);
        return tab;
      },
      async finishTest() {
        const finished = tabs;
        tabs = [];
        await Promise.all(finished.map((tab) => tab.context.close()));
        const problems = finished.flatMap((tab) => tab.problems);
        expect(problems, 'console errors or uncaught exceptions in the console').toEqual([]);
      },
      async close() {
        await started.browser.close();
        await started.gateway.close();
        await upstream.close();
      },
    };
  } catch (error) {
    await browser?.close();
    await gateway?.close();
    await upstream.close();
    throw error;
  }
}

function watch(context: BrowserContext, page: Page): Tab {
  const problems: PageProblem[] = [];
  const expected: RegExp[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const url = message.location().url;
    if (!expected.some((pattern) => pattern.test(url))) problems.push({ text: message.text(), url });
  });
  page.on('pageerror', (error) => problems.push({ text: `uncaught: ${error.stack ?? error.message}`, url: page.url() }));
  return { context, page, problems, expectFailure: (url) => void expected.push(url) };
}

/** Opens the console and signs in with the "API key" field; resolves once the "Pages" nav shows. */
export async function signIn(page: Page, origin: string, secret: string): Promise<void> {
  await page.goto(`${origin}/console/`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await page.getByLabel('API key').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await nav(page).getByRole('link', { name: 'Usage', exact: true }).waitFor();
}

/** The "Pages" navigation landmark. */
export function nav(page: Page): Locator {
  return page.getByRole('navigation', { name: 'Pages' });
}

/** Waits until a page shows its h1 and no "Loading…" status. */
export async function pageReady(page: Page, name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
  await expect.poll(() => page.getByRole('status').filter({ hasText: 'Loading…' }).count(), { timeout: 10_000 }).toBe(0);
}

/** Deep-links to a console page (the session's token stays in sessionStorage) and waits until it is ready. */
export async function openConsolePage(page: Page, origin: string, target: ConsolePage): Promise<void> {
  await page.goto(`${origin}/console/${target.path}`);
  await pageReady(page, target.name);
}

/** How far the document is wider than the viewport (0 when nothing scrolls sideways). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

let axeSource: Promise<string> | undefined;

/**
 * axe-core's serious and critical violations on the page, one line each (rule, impact, help, the elements).
 * The page's CSP forbids inline scripts: the context must be opened with `bypassCSP: true`.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Injected once per document: a client-side navigation keeps it.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.addScriptTag({ content: await axeSource });
  const violations = await page.evaluate(async () => {
    const { axe, document } = globalThis as unknown as {
      axe: { run(context: unknown, options: object): Promise<{ violations: AxeViolation[] }> };
      document: unknown;
    };
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help}; ${violation.nodes.map((node) => `${node.target.join(' ')}: ${node.failureSummary ?? ''}`).join(' | ')}`,
    );
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary?: string }>;
}

/** A meter's or progress bar's value and maximum, from the element or its ARIA attributes. */
export async function meterReading(meter: Locator): Promise<{ value: number; max: number }> {
  return meter.evaluate((element: unknown) => {
    const el = element as { value?: unknown; max?: unknown; getAttribute(name: string): string | null };
    const aria = (name: string) => el.getAttribute(name);
    const valueNow = aria('aria-valuenow');
    if (valueNow !== null) return { value: Number(valueNow), max: Number(aria('aria-valuemax') ?? 100) };
    return { value: Number(el.value), max: Number(el.max) };
  });
}
