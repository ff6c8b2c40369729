/**
 * The Lua scripts of src/infra/redis/scripts/ by name, as `<name>-<numberOfKeys>.lua` (`-n`: the caller
 * passes the count first). Data only, so that both the connection options (connections.ts) and the
 * script loader (scripts.ts) read it without importing each other.
 */
export const SCRIPT_FILES = {
  admit: 'admit-n.lua',
  finishRequest: 'finish-request-n.lua',
  outboxTake: 'outbox-take-2.lua',
  outboxRelease: 'outbox-release-2.lua',
  budgetSettle: 'budget-settle-n.lua',
  budgetPeek: 'budget-peek-n.lua',
  budgetSeed: 'budget-seed-1.lua',
  creditTopUp: 'credit-top-up-1.lua',
  idempotencyComplete: 'idempotency-complete-1.lua',
  idempotencyRelease: 'idempotency-release-1.lua',
  responseStart: 'response-start-1.lua',
  responseCancel: 'response-cancel-1.lua',
  responseKeep: 'response-keep-1.lua',
} as const;

/** The name a script is defined under on a client (`redis.admit(…)`). */
export type ScriptName = keyof typeof SCRIPT_FILES;

/**
 * Scripts whose caller passes the number of keys first. ioredis's auto-pipelining on a cluster
 * routes a command by its first argument, which for these is the count, not a key: they must be
 * sent on their own.
 */
export const VARIABLE_KEY_SCRIPTS: readonly string[] = Object.entries(SCRIPT_FILES)
  .filter(([, file]) => file.endsWith('-n.lua'))
  .map(([name]) => name);
