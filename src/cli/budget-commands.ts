/** The CLI's budget, credit, plan and PII policy commands (REDIS_URL is required: they take effect through Redis). */
import { createBudgetPolicy, deleteBudgetPolicy, setTenantPlan, topUpCredits } from '../domain/budget/budget-admin.ts';
import { setPiiPolicy } from '../domain/pii/pii-policy-admin.ts';
import { PII_CATEGORIES, type PiiCategory } from '../domain/pii/types.ts';
import type { BudgetWindow } from '../infra/store/repository.ts';
import type { CliContext } from './cli-context.ts';
import { UsageError, type CliOutput } from './commands.ts';

const BY_CLI = { actor: 'cli', requestId: null };
const WINDOWS: readonly BudgetWindow[] = ['hour', 'day', 'month'];

/** Parses a window name; UsageError otherwise. */
export function parseWindow(value: string): BudgetWindow {
  const window = WINDOWS.find((candidate) => candidate === value);
  if (!window) throw new UsageError(`Invalid window '${value}': use hour, day or month.`);
  return window;
}

/** Parses a whole number in [`min`, `max`] for option `name`; UsageError otherwise. */
export function parseCount(name: string, value: string, min: number, max: number): number {
  const count = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(count) || count < min || count > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}; got '${value}'.`);
  return count;
}

/** `budgets create`: prints the new policy's id. */
export async function createBudgetCommand(
  ctx: CliContext,
  tenantId: string,
  window: BudgetWindow,
  limitMicros: number,
  feature: string | undefined,
  io: CliOutput,
): Promise<void> {
  const policy = await createBudgetPolicy(ctx.budgetAdmin(), tenantId, { window, limit_micros: limitMicros, feature: feature ?? null }, BY_CLI);
  io.out(policy.id);
  io.err(`created ${window} budget of ${limitMicros} micro-units for tenant ${tenantId}${feature ? ` (feature ${feature})` : ''}`);
}

/** `budgets list`: the tenant's policies. */
export async function listBudgetsCommand(ctx: CliContext, tenantId: string, io: CliOutput): Promise<void> {
  for (const policy of await ctx.repo.budgets.listPolicies(tenantId)) {
    io.out(`${policy.id}\t${policy.window}\t${policy.limitMicros}\t${policy.feature ?? '*'}\t${policy.createdAt.toISOString()}`);
  }
}

/** `budgets delete`. */
export async function deleteBudgetCommand(ctx: CliContext, tenantId: string, id: string, io: CliOutput): Promise<void> {
  await deleteBudgetPolicy(ctx.budgetAdmin(), tenantId, id, BY_CLI);
  io.err(`deleted budget ${id} of tenant ${tenantId}`);
}

/** `credits top-up`: prints the top-up's id. */
export async function topUpCommand(ctx: CliContext, tenantId: string, amountMicros: number, io: CliOutput): Promise<void> {
  if (!(await ctx.repo.tenants.get(tenantId))) throw new Error(`Tenant '${tenantId}' does not exist.`);
  const topUp = await topUpCredits(ctx.budgetAdmin(), tenantId, { amount_micros: amountMicros }, BY_CLI);
  io.out(topUp.id);
  io.err(`topped up ${amountMicros} micro-units for tenant ${tenantId}`);
}

/** `plan set`: the tenant's rate limits, queue cap and price of a cache hit (an option left out uses the configured default; 0 means no limit, or no price). */
export async function setPlanCommand(
  ctx: CliContext,
  tenantId: string,
  limits: { rpm?: number; tpm?: number; keyRpm?: number; keyTpm?: number; maxQueued?: number; cacheHitPriceMicros?: number },
  io: CliOutput,
): Promise<void> {
  if (!(await ctx.repo.tenants.get(tenantId))) throw new Error(`Tenant '${tenantId}' does not exist.`);
  await setTenantPlan(
    ctx.budgetAdmin(),
    tenantId,
    {
      requests_per_minute: limits.rpm ?? null,
      tokens_per_minute: limits.tpm ?? null,
      key_requests_per_minute: limits.keyRpm ?? null,
      key_tokens_per_minute: limits.keyTpm ?? null,
      max_queued: limits.maxQueued ?? null,
      cache_hit_price_micros: limits.cacheHitPriceMicros ?? null,
    },
    BY_CLI,
  );
  io.err(`set the plan of tenant ${tenantId}`);
}

const PII_MODES = ['block', 'mask', 'flag', 'off'] as const;

/** Parses `--mode` and `--critical a,b` of `pii set`; UsageError otherwise. */
export function parsePiiPolicy(mode: string, critical: string | undefined): { mode: (typeof PII_MODES)[number]; critical?: PiiCategory[] } {
  const chosen = PII_MODES.find((candidate) => candidate === mode);
  if (!chosen) throw new UsageError(`Invalid mode '${mode}': use block, mask, flag or off.`);
  if (critical === undefined) return { mode: chosen };
  const categories = critical.split(',').map((name) => name.trim());
  const unknown = categories.find((name) => !(PII_CATEGORIES as readonly string[]).includes(name));
  if (unknown !== undefined) throw new UsageError(`Unknown PII category '${unknown}': use ${PII_CATEGORIES.join(', ')}.`);
  return { mode: chosen, critical: categories as PiiCategory[] };
}

/** `pii set`: the tenant's PII policy. */
export async function setPiiCommand(ctx: CliContext, tenantId: string, policy: ReturnType<typeof parsePiiPolicy>, io: CliOutput): Promise<void> {
  if (!(await ctx.repo.tenants.get(tenantId))) throw new Error(`Tenant '${tenantId}' does not exist.`);
  const saved = await setPiiPolicy(ctx.budgetAdmin(), tenantId, policy, BY_CLI);
  io.err(`set the PII policy of tenant ${tenantId}: ${saved.mode} (${saved.critical.join(', ')})`);
}
