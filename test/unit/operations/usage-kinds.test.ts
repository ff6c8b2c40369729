/**
 * The usage stores take exactly the list's kinds. infra/ may not import the list, and a migration
 * that ran is never edited, so both stores spell the kinds: PostgreSQL in the CHECK of the latest
 * migration that sets it (a new operation adds one), MongoDB in the usage schema's enum.
 */
import { afterAll, describe, expect, it } from 'vitest';
import mongoose from 'mongoose';
import { MIGRATIONS } from '../../../src/infra/store/postgres/migrations.ts';
import { createUsageModel } from '../../../src/infra/store/mongodb/usage.ts';
import { USAGE_KINDS } from '../../../src/operations/index.ts';

// usage_records.operation's constraint as a migration writes it: `CHECK (operation IN ('chat', …))`.
const CHECK = /CHECK \(operation IN \(([^)]*)\)\)/;

/** The kinds the latest migration that constrains usage_records.operation allows. */
function checkedKinds(): string[] {
  const latest = MIGRATIONS.map((migration) => CHECK.exec(migration.sql))
    .filter((match) => match !== null)
    .at(-1);
  if (!latest) throw new Error('no migration constrains usage_records.operation');
  return (latest[1] as string).split(',').map((kind) => kind.trim().replace(/^'(.*)'$/, '$1'));
}

const connection = mongoose.createConnection();

afterAll(async () => {
  await connection.close();
});

describe('usage kinds', () => {
  it("PostgreSQL's CHECK allows exactly the list's kinds", () => {
    expect(checkedKinds().sort()).toEqual([...USAGE_KINDS].sort());
  });

  it("the mongoose enum is exactly the list's kinds", () => {
    const kinds = createUsageModel(connection).schema.path('operation').options.enum as string[];
    expect([...kinds].sort()).toEqual([...USAGE_KINDS].sort());
  });
});
