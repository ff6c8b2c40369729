/**
 * The boundary check (.dependency-cruiser.cjs, `npm run lint:boundaries`): the tree meets every rule but
 * the known violations, each known violation still happens (a fix removes its entry), and on a planted
 * tree that breaks each rule once, every rule fires where it should and nowhere else.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}
interface Config {
  forbidden: Array<{ name: string }>;
  options: { knownViolations: Violation[] };
}

const config = createRequire(import.meta.url)(CONFIG) as Config;

/** Runs dependency-cruiser with the house's configuration in `cwd` over `paths`; its violations, the known ones marked `ignore`. */
function cruise(cwd: string, paths: string[]): Violation[] {
  const run = spawnSync(process.execPath, [DEPCRUISE, ...paths, '--config', CONFIG, '--output-type', 'json'], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (!run.stdout) throw new Error(`dependency-cruiser wrote nothing (exit ${run.status}): ${run.stderr}`);
  return (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const line = (v: Violation) => `${v.rule.name}: ${v.from} → ${v.to}`;

describe('the tree', () => {
  let violations: Violation[];
  beforeAll(() => {
    violations = cruise(ROOT, ['src', 'workers']);
  });

  it('breaks no boundary rule but the known violations', () => {
    expect(violations.filter((v) => v.rule.severity !== 'ignore').map(line)).toEqual([]);
  });

  it('still has every known violation (remove the entry of one that was fixed)', () => {
    const found = new Set(violations.map(line));
    expect(config.options.knownViolations.map(line).filter((known) => !found.has(known))).toEqual([]);
  });
});

/**
 * A small tree in the house's layout; each file names the rule its imports break. A dependency that
 * breaks no rule (an entry point importing a process, a provider's index, the catalog built on the providers' model shape)
 * is there too, so that a rule firing too widely fails as well.
 */
const PLANTED: Record<string, string> = {
  'src/server.ts': "import '../src/web/app.ts';",
  'src/dev.ts': "import './web/app.ts';\nimport './worker/main.ts';",
  'workers/main.ts': "import '../src/worker/main.ts';",
  'src/web/app.ts': "import '../worker/main.ts';", // web-not-to-worker
  'src/worker/main.ts': "import '../web/routes.ts';", // worker-not-to-web
  'src/web/routes.ts': "import '../providers/acme/index.ts';",
  'src/domain/budget.ts': "import '../operations/chat.ts';", // domain-not-to-processes
  'src/infra/health.ts': "import '../web/routes.ts';", // infra-not-to-processes
  'src/infra/queue.ts': 'export {};',
  'src/operations/chat.ts': "import '../worker/main.ts';\nimport '../providers/acme/index.ts';\nimport '../providers/acme/request.ts';", // operations-not-to-processes, provider-internals
  'src/cli/gateway.ts': "import '../web/routes.ts';", // shared-code-not-to-processes
  'src/config.ts': "import './domain/budget.ts';",
  'src/domain/catalog/schema.ts': "import { MODEL_FIELDS } from '../../providers/model.ts';\nexport type CatalogModel = typeof MODEL_FIELDS;",
  'src/providers/model.ts': 'export const MODEL_FIELDS = {};\nexport type ModelOf = { alias: string };',
  'src/providers/acme/index.ts': "import type { ModelOf } from '../model.ts';\nimport './request.ts';\nexport type Target = ModelOf;",
  'src/providers/acme/request.ts':
    "import '../../infra/queue.ts';\nimport type { CatalogModel } from '../../domain/catalog/schema.ts';\nexport type Model = CatalogModel;", // providers-stay-beneath (twice)
  'src/providers/acme/descriptor.ts': "import '../shared/sse.ts';\nimport '../../wire/chat.ts';\nimport '../../errors/gateway-error.ts';",
  'src/providers/descriptors.ts': "import './acme/descriptor.ts';\nimport './acme/request.ts';", // provider-descriptors-list
  'src/providers/registry.ts': "import './acme/index.ts';\nimport './shared/sse.ts';",
  'src/providers/other/index.ts': "import '../acme/index.ts';\nimport '../acme/request.ts';", // provider-internals-across-providers
  'src/providers/shared/sse.ts': "import '../acme/index.ts';", // shared-providers-code-not-to-a-provider
  'src/wire/chat.ts': "import './usage.ts';\nimport '../errors/gateway-error.ts';\nimport 'node:fs';", // wire-only-wire (twice)
  'src/wire/usage.ts': 'export {};',
  'src/errors/gateway-error.ts': 'export {};',
  'src/infra/redis/scripts.ts': "import { CLIENT } from './connections.ts';\nexport const NAMES = ['admit', CLIENT];", // no-circular
  'src/infra/redis/connections.ts': "import { NAMES } from './scripts.ts';\nexport const CLIENT = 'client';\nexport const COUNT = NAMES.length;", // no-circular
  'src/infra/store/row.ts': "import type { Table } from './table.ts';\nexport type Row = { table: Table };", // no-circular (of types only)
  'src/infra/store/table.ts': "import type { Row } from './row.ts';\nexport type Table = { rows: Row[] };",
  'src/infra/store.ts':
    "import './missing.ts';\nimport 'dev-only';\nimport type { Dev } from 'dev-only';\nimport '../../test/helpers/http.ts';\nexport type D = Dev;", // not-to-unresolvable, not-to-dev-dependencies (once: the value import), not-to-tests
  'test/helpers/http.ts': 'export {};',
  'package.json': JSON.stringify({ name: 'planted', type: 'module', devDependencies: { 'dev-only': '1.0.0' } }),
  'node_modules/dev-only/package.json': JSON.stringify({ name: 'dev-only', version: '1.0.0', main: 'index.js', types: 'index.d.ts' }),
  'node_modules/dev-only/index.js': 'module.exports = {};',
  'node_modules/dev-only/index.d.ts': 'export type Dev = string;',
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', allowImportingTsExtensions: true, noEmit: true, strict: true },
  }),
};

const EXPECTED = [
  'web-not-to-worker: src/web/app.ts → src/worker/main.ts',
  'worker-not-to-web: src/worker/main.ts → src/web/routes.ts',
  'domain-not-to-processes: src/domain/budget.ts → src/operations/chat.ts',
  'infra-not-to-processes: src/infra/health.ts → src/web/routes.ts',
  'operations-not-to-processes: src/operations/chat.ts → src/worker/main.ts',
  'shared-code-not-to-processes: src/cli/gateway.ts → src/web/routes.ts',
  'providers-stay-beneath: src/providers/acme/request.ts → src/infra/queue.ts',
  'providers-stay-beneath: src/providers/acme/request.ts → src/domain/catalog/schema.ts',
  'provider-internals: src/operations/chat.ts → src/providers/acme/request.ts',
  'provider-descriptors-list: src/providers/descriptors.ts → src/providers/acme/request.ts',
  'provider-internals-across-providers: src/providers/other/index.ts → src/providers/acme/request.ts',
  'shared-providers-code-not-to-a-provider: src/providers/shared/sse.ts → src/providers/acme/index.ts',
  'wire-only-wire: src/wire/chat.ts → src/errors/gateway-error.ts',
  'wire-only-wire: src/wire/chat.ts → fs',
  // One violation per cycle, named by the first edge dependency-cruiser met.
  'no-circular: src/infra/redis/connections.ts → src/infra/redis/scripts.ts',
  'no-circular: src/infra/store/row.ts → src/infra/store/table.ts',
  'not-to-unresolvable: src/infra/store.ts → ./missing.ts',
  'not-to-dev-dependencies: src/infra/store.ts → node_modules/dev-only/index.js',
  'not-to-tests: src/infra/store.ts → test/helpers/http.ts',
];

describe('a planted tree that breaks each rule once', () => {
  let dir: string;
  let violations: Violation[];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'boundaries-'));
    for (const [path, text] of Object.entries(PLANTED)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), `${text}\n`);
    }
    violations = cruise(dir, ['src', 'workers']);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is caught by every rule, where it was planted and nowhere else', () => {
    expect(violations.map(line).sort()).toEqual([...EXPECTED].sort());
  });

  it('leaves no rule of the configuration untried', () => {
    const fired = new Set(violations.map((v) => v.rule.name));
    expect(config.forbidden.map((rule) => rule.name).filter((name) => !fired.has(name))).toEqual([]);
  });
});
