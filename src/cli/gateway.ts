/** The `gateway` CLI entry: parses argv, opens the store, runs one command, sets the exit code. */
import { parseArgs } from 'node:util';
import { loadCliConfig } from '../config.ts';
import { createStore } from '../store/create-store.ts';
import { createCliContext, type CliContext } from './cli-context.ts';
import { activatePromptCommand, createPromptCommand, listPromptVersionsCommand, verifyAuditCommand } from './prompt-commands.ts';
import {
  UsageError,
  assertTenantId,
  createKeyCommand,
  createTenantCommand,
  listKeysCommand,
  migrateCommand,
  parseRole,
  revokeKeyCommand,
  type CliOutput,
} from './commands.ts';

const USAGE = `Usage:
  gateway tenants create <tenant> [--name <display name>]
  gateway keys create --tenant <tenant> --role <admin|developer|app|auditor>
  gateway keys revoke <key-id>
  gateway keys list --tenant <tenant>
  gateway prompts create <name> --tenant <tenant> --file <version.json> [--activate]
  gateway prompts activate <name> --tenant <tenant> --version <n>
  gateway prompts list <name> --tenant <tenant>
  gateway audit verify --tenant <tenant>
  gateway migrate

The store is DATABASE_URL (PostgreSQL) or MONGODB_URI (MongoDB, wins when both are set).
REDIS_URL (optional) lets prompt activations reach every web process at once;
CATALOG (optional) checks a prompt's model against the catalog.
A version file is JSON: {"messages":[{"role":"user","content":"Hi {{name}}"}],"model":"svc-flash","parameters":{}}`;

const OPTIONS = {
  name: { type: 'string' },
  tenant: { type: 'string' },
  role: { type: 'string' },
  file: { type: 'string' },
  version: { type: 'string' },
  activate: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const STRING_OPTIONS = ['name', 'tenant', 'role', 'file', 'version'] as const;
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
    options: ['tenant', 'role'],
    build: (_args, options) => {
      const tenant = required(options, 'tenant');
      const role = parseRole(required(options, 'role'));
      return (ctx, io) => createKeyCommand(ctx, tenant, role, io);
    },
  },
  { words: 'keys revoke', args: 1, options: [], build: ([keyId = '']) => (ctx, io) => revokeKeyCommand(ctx, keyId, io) },
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
  const options: Options = { name: values.name, tenant: values.tenant, role: values.role, file: values.file, version: values.version, activate: values.activate };
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
