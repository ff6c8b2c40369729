/** The `gateway` CLI entry: parses argv, opens the store, runs one command, sets the exit code. */
import { parseArgs } from 'node:util';
import { loadCliConfig } from '../config.ts';
import { createStore } from '../infra/store/create-store.ts';
import { createCliContext, type CliContext } from './cli-context.ts';
import { activatePromptCommand, createPromptCommand, listPromptVersionsCommand, verifyAuditCommand } from './prompt-commands.ts';
import { MAX_MICROS } from '../domain/budget/budget-admin.ts';
import { MAX_STORED_INTEGER } from '../infra/store/limits.ts';
import {
  createBudgetCommand,
  deleteBudgetCommand,
  listBudgetsCommand,
  parseCount,
  parsePiiPolicy,
  parseWindow,
  setPiiCommand,
  setPlanCommand,
  topUpCommand,
} from './budget-commands.ts';
import {
  UsageError,
  assertTenantId,
  createKeyCommand,
  createTenantCommand,
  listKeysCommand,
  migrateCommand,
  parseExpiresAt,
  parseKeyLimits,
  parseRole,
  revokeKeyCommand,
  updateKeyLimitsCommand,
  type CliOutput,
} from './commands.ts';

const USAGE = `Usage:
  gateway tenants create <tenant> [--name <display name>]
  gateway keys create --tenant <tenant> --role <admin|developer|app|auditor> [--name <name>] [--expires-at <ISO 8601>]
                      [--rpm <n>] [--tpm <n>] [--max-concurrent <n>]
  gateway keys update <key-id> [--rpm <n|none>] [--tpm <n|none>] [--max-concurrent <n|none>]
  gateway keys revoke <key-id>
  gateway keys list --tenant <tenant>
  gateway prompts create <name> --tenant <tenant> --file <version.json> [--activate]
  gateway prompts activate <name> --tenant <tenant> --version <n>
  gateway prompts list <name> --tenant <tenant>
  gateway audit verify --tenant <tenant>
  gateway budgets create --tenant <tenant> --window <hour|day|month> --limit <micro-units> [--feature <feature>]
  gateway budgets list --tenant <tenant>
  gateway budgets delete <budget-id> --tenant <tenant>
  gateway credits top-up --tenant <tenant> --amount <micro-units>
  gateway plan set --tenant <tenant> [--rpm <n>] [--tpm <n>] [--key-rpm <n>] [--key-tpm <n>] [--max-queued <n>] [--cache-hit-price-micros <n>]
  gateway pii set --tenant <tenant> --mode <block|mask|flag|off> [--critical <category,…>]
  gateway migrate

The store is DATABASE_URL (PostgreSQL) or MONGODB_URI (MongoDB, wins when both are set).
REDIS_URL (optional) lets prompt activations and key revocations and updates reach every web process at once;
CATALOG (optional) checks a prompt's model against the catalog.
Budgets, credits and plans need REDIS_URL: they take effect through Redis.
Amounts are integer micro-units of the tenant's currency (1,000,000 = 1.00).
A version file is JSON: {"messages":[{"role":"user","content":"Hi {{name}}"}],"model":"svc-flash","parameters":{}}`;

const OPTIONS = {
  name: { type: 'string' },
  tenant: { type: 'string' },
  role: { type: 'string' },
  file: { type: 'string' },
  version: { type: 'string' },
  activate: { type: 'boolean' },
  window: { type: 'string' },
  limit: { type: 'string' },
  feature: { type: 'string' },
  'expires-at': { type: 'string' },
  amount: { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  'key-rpm': { type: 'string' },
  'key-tpm': { type: 'string' },
  'max-queued': { type: 'string' },
  'cache-hit-price-micros': { type: 'string' },
  'max-concurrent': { type: 'string' },
  mode: { type: 'string' },
  critical: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const STRING_OPTIONS = [
  'name',
  'tenant',
  'role',
  'file',
  'version',
  'window',
  'limit',
  'feature',
  'expires-at',
  'amount',
  'rpm',
  'tpm',
  'key-rpm',
  'key-tpm',
  'max-queued',
  'cache-hit-price-micros',
  'max-concurrent',
  'mode',
  'critical',
] as const;
type OptionName = (typeof STRING_OPTIONS)[number] | 'activate';
type Options = Partial<Record<(typeof STRING_OPTIONS)[number], string>> & { activate?: boolean };
type Command = (ctx: CliContext, io: CliOutput) => Promise<void>;

interface CommandSpec {
  words: string;
  args: number;
  options: readonly OptionName[];
  build(args: string[], options: Options): Command;
}

function required(options: Options, name: (typeof STRING_OPTIONS)[number]): string {
  const value = options[name];
  if (value === undefined || value === '') throw new UsageError(`Missing required option --${name}.`);
  return value;
}

const COMMANDS: readonly CommandSpec[] = [
  {
    words: 'tenants create',
    args: 1,
    options: ['name'],
    build: ([id = ''], options) => {
      assertTenantId(id);
      return (ctx, io) => createTenantCommand(ctx, id, options.name, io);
    },
  },
  {
    words: 'keys create',
    args: 0,
    options: ['tenant', 'role', 'name', 'expires-at', 'rpm', 'tpm', 'max-concurrent'],
    build: (_args, options) => {
      const tenant = required(options, 'tenant');
      const role = parseRole(required(options, 'role'));
      const expiresAt = options['expires-at'] === undefined ? null : parseExpiresAt(options['expires-at']);
      const limits = parseKeyLimits(options, false);
      return (ctx, io) => createKeyCommand(ctx, tenant, role, { name: options.name || null, expiresAt, limits }, io);
    },
  },
  {
    words: 'keys update',
    args: 1,
    options: ['rpm', 'tpm', 'max-concurrent'],
    build: ([keyId = ''], options) => {
      const limits = parseKeyLimits(options, true);
      if (Object.keys(limits).length === 0) throw new UsageError("'keys update' needs --rpm, --tpm or --max-concurrent.");
      return (ctx, io) => updateKeyLimitsCommand(ctx, keyId, limits, io);
    },
  },
  {
    words: 'keys revoke',
    args: 1,
    options: [],
    build:
      ([keyId = '']) =>
      (ctx, io) =>
        revokeKeyCommand(ctx, keyId, io),
  },
  {
    words: 'keys list',
    args: 0,
    options: ['tenant'],
    build: (_args, options) => {
      const tenant = required(options, 'tenant');
      return (ctx, io) => listKeysCommand(ctx.repo, tenant, io);
    },
  },
  {
    words: 'prompts create',
    args: 1,
    options: ['tenant', 'file', 'activate'],
    build: ([name = ''], options) => {
      const tenant = required(options, 'tenant');
      const file = required(options, 'file');
      return (ctx, io) => createPromptCommand(ctx, tenant, name, file, options.activate === true, io);
    },
  },
  {
    words: 'prompts activate',
    args: 1,
    options: ['tenant', 'version'],
    build: ([name = ''], options) => {
      const tenant = required(options, 'tenant');
      const version = Number(required(options, 'version'));
      if (!Number.isSafeInteger(version) || version < 1) throw new UsageError('--version must be a positive integer.');
      return (ctx, io) => activatePromptCommand(ctx, tenant, name, version, io);
    },
  },
  {
    words: 'prompts list',
    args: 1,
    options: ['tenant'],
    build: ([name = ''], options) => {
      const tenant = required(options, 'tenant');
      return (ctx, io) => listPromptVersionsCommand(ctx, tenant, name, io);
    },
  },
  {
    words: 'audit verify',
    args: 0,
    options: ['tenant'],
    build: (_args, options) => {
      const tenant = required(options, 'tenant');
      return (ctx, io) => verifyAuditCommand(ctx, tenant, io);
    },
  },
  {
    words: 'budgets create',
    args: 0,
    options: ['tenant', 'window', 'limit', 'feature'],
    build: (_args, options) => {
      const tenant = required(options, 'tenant');
      const window = parseWindow(required(options, 'window'));
      const limit = parseCount('limit', required(options, 'limit'), 1, MAX_MICROS);
      return (ctx, io) => createBudgetCommand(ctx, tenant, window, limit, options.feature, io);
    },
  },
  {
    words: 'budgets list',
    args: 0,
    options: ['tenant'],
    build: (_args, options) => {
      const tenant = required(options, 'tenant');
      return (ctx, io) => listBudgetsCommand(ctx, tenant, io);
    },
  },
  {
    words: 'budgets delete',
    args: 1,
    options: ['tenant'],
    build: ([id = ''], options) => {
      const tenant = required(options, 'tenant');
      return (ctx, io) => deleteBudgetCommand(ctx, tenant, id, io);
    },
  },
  {
    words: 'credits top-up',
    args: 0,
    options: ['tenant', 'amount'],
    build: (_args, options) => {
      const tenant = required(options, 'tenant');
      const amount = parseCount('amount', required(options, 'amount'), 1, MAX_MICROS);
      return (ctx, io) => topUpCommand(ctx, tenant, amount, io);
    },
  },
  {
    words: 'plan set',
    args: 0,
    options: ['tenant', 'rpm', 'tpm', 'key-rpm', 'key-tpm', 'max-queued', 'cache-hit-price-micros'],
    build: (_args, options) => {
      const tenant = required(options, 'tenant');
      const count = (name: 'rpm' | 'tpm' | 'key-rpm' | 'key-tpm' | 'max-queued' | 'cache-hit-price-micros', min: number, max = MAX_STORED_INTEGER) =>
        options[name] === undefined ? undefined : parseCount(name, options[name], min, max);
      const limits = {
        rpm: count('rpm', 0),
        tpm: count('tpm', 0),
        keyRpm: count('key-rpm', 0),
        keyTpm: count('key-tpm', 0),
        maxQueued: count('max-queued', 1),
        cacheHitPriceMicros: count('cache-hit-price-micros', 0, MAX_MICROS),
      };
      return (ctx, io) => setPlanCommand(ctx, tenant, limits, io);
    },
  },
  {
    words: 'pii set',
    args: 0,
    options: ['tenant', 'mode', 'critical'],
    build: (_args, options) => {
      const tenant = required(options, 'tenant');
      const policy = parsePiiPolicy(required(options, 'mode'), options.critical);
      return (ctx, io) => setPiiCommand(ctx, tenant, policy, io);
    },
  },
  { words: 'migrate', args: 0, options: [], build: () => (ctx, io) => migrateCommand(ctx.repo, io) },
];

/** The command argv asks for, validated before any connection is made; null means `--help`. */
function parseCommand(argv: string[]): Command | null {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help) return null;
  const spec = COMMANDS.find((candidate) => {
    const words = candidate.words.split(' ');
    return words.every((word, i) => positionals[i] === word);
  });
  if (!spec) throw new UsageError(positionals.length ? `Unknown command '${positionals.join(' ')}'.` : 'No command given.');
  const args = positionals.slice(spec.words.split(' ').length);
  if (args.length !== spec.args) throw new UsageError(`'${spec.words}' takes ${spec.args} argument(s), got ${args.length}.`);
  const options: Options = { activate: values.activate };
  for (const name of STRING_OPTIONS) options[name] = values[name];
  for (const name of [...STRING_OPTIONS, 'activate'] as const) {
    if (options[name] !== undefined && !spec.options.includes(name)) {
      throw new UsageError(`Option --${name} does not apply to '${spec.words}'.`);
    }
  }
  return spec.build(args, options);
}

function isParseArgsError(error: unknown): error is Error {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return describeError(error.errors[0]);
  if (error instanceof Error) return error.message.split('\n')[0] || error.name;
  return String(error);
}

const io: CliOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

async function runCommand(command: Command): Promise<number> {
  let ctx: CliContext | undefined;
  try {
    const config = loadCliConfig();
    ctx = createCliContext(await createStore(config.store), config);
    await command(ctx, io);
    return 0;
  } catch (error) {
    io.err(`gateway: ${describeError(error)}`);
    return 1;
  } finally {
    await ctx?.close().catch(() => undefined);
  }
}

/** Exit codes: 0 success, 1 store or configuration error, 2 bad usage. */
async function main(argv: string[]): Promise<number> {
  let command: Command | null;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError) && !isParseArgsError(error)) throw error;
    io.err(`gateway: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (command === null) {
    io.out(USAGE);
    return 0;
  }
  return runCommand(command);
}

process.exitCode = await main(process.argv.slice(2));
