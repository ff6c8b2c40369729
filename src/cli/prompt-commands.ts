/** The CLI's prompt and audit commands. */
import { readFile } from 'node:fs/promises';
import { Value } from '@sinclair/typebox/value';
import { activatePromptVersion, createPromptVersion, PromptVersionInputSchema, type PromptVersionInput } from '../domain/prompts/prompt-admin.ts';
import { UnknownPromptError } from '../errors/gateway-error.ts';
import type { CliContext } from './cli-context.ts';
import type { CliOutput } from './commands.ts';

const BY_CLI = { actor: 'cli', requestId: null };

async function readVersionFile(path: string): Promise<PromptVersionInput> {
  const data: unknown = JSON.parse(await readFile(path, 'utf8'));
  const first = Value.Errors(PromptVersionInputSchema, data).First();
  if (first) throw new Error(`${path}: ${first.path || '/'} ${first.message}.`);
  return data as PromptVersionInput;
}

/** `prompts create`: a new version from a JSON file ({messages, model, parameters}); prints its number. */
export async function createPromptCommand(ctx: CliContext, tenantId: string, name: string, file: string, activate: boolean, io: CliOutput): Promise<void> {
  const input = { ...(await readVersionFile(file)), activate };
  const version = await createPromptVersion(await ctx.promptAdmin(io.err), tenantId, name, input, BY_CLI);
  io.out(String(version.version));
  io.err(`created ${name} version ${version.version} for tenant ${tenantId} (variables: ${version.variables.join(', ') || 'none'})`);
}

/** `prompts activate`: makes a version active (a rollback when it is older). */
export async function activatePromptCommand(ctx: CliContext, tenantId: string, name: string, version: number, io: CliOutput): Promise<void> {
  await activatePromptVersion(await ctx.promptAdmin(io.err), tenantId, name, version, BY_CLI);
  io.err(`activated ${name} version ${version} for tenant ${tenantId}`);
}

/** `prompts list`: the versions of a prompt, newest first, the active one marked. */
export async function listPromptVersionsCommand(ctx: CliContext, tenantId: string, name: string, io: CliOutput): Promise<void> {
  const history = await ctx.repo.prompts.history(tenantId, name);
  if (!history) throw new UnknownPromptError(name);
  for (const version of history.versions) {
    const marker = version.version === history.activeVersion ? '*' : ' ';
    io.out(`${marker} ${version.version}\t${version.model}\t${version.createdAt.toISOString()}\t${version.createdBy}\t${version.variables.join(',')}`);
  }
}

/** `audit verify`: walks the tenant's chain; a broken chain is an error naming the first bad event. */
export async function verifyAuditCommand(ctx: CliContext, tenantId: string, io: CliOutput): Promise<void> {
  const result = await ctx.repo.audit.verify(tenantId);
  if (!result.ok) throw new Error(`audit chain of tenant ${tenantId} is broken at event ${result.brokenAt.seq} (${result.brokenAt.id}): ${result.reason}`);
  io.out(`ok: ${result.events} events, chain intact`);
}
