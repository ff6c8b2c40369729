/**
 * The one list of operations. Everything that needs "every operation" derives from it: the
 * routes, their OpenAPI entries and permissions (the web app), the runner and span name a job's
 * kind picks (the worker's job processor), the job and usage kinds below, and the usage stores'
 * kinds (the mongoose enum; PostgreSQL's CHECK, which a migration fixes, is held to this list by
 * test/unit/operations/usage-kinds.test.ts). A new operation is a folder beside these and one
 * entry here.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { JobCommon } from '../infra/queue/job.ts';
import type { Operation, Operations } from './operation.ts';
import { chat } from './chat/index.ts';
import { embeddings } from './embeddings/index.ts';
import { messages } from './messages/index.ts';
import { responses } from './responses/index.ts';
import { responsesCompact } from './responses-compact/index.ts';

/** Every operation the gateway serves, in the order its routes are registered. */
export const OPERATIONS = [chat, embeddings, messages, responses, responsesCompact] as const;

/** Each operation's job payload: its kind, and what its operation reads. */
type Payloads<List extends Operations> = { [I in keyof List]: { operation: List[I]['name'] } & Static<List[I]['payload']> };

/** What a job can carry: the kind of one of the operations. */
export type JobKind = (typeof OPERATIONS)[number]['name'];

/** The operation-specific part of a job: its kind, and the payload its operation reads. */
export type JobPayload = Payloads<typeof OPERATIONS>[number];

/** Data of one request's job: the fields every job has, and the payload of its operation. */
export type RequestJob = JobCommon & JobPayload;

/** What a usage record can name: the kind of the job it records. */
export type UsageKind = JobKind;

/** The usage kinds, in the list's order. */
export const USAGE_KINDS: readonly UsageKind[] = OPERATIONS.map((operation) => operation.name);

/** The usage kinds as a schema: a usage record's `operation` on the wire. */
export const UsageKindSchema = Type.Union(USAGE_KINDS.map((kind) => Type.Literal(kind)));

/** Each operation of `operations` by its job kind. */
export function byKind(operations: Operations): ReadonlyMap<string, Operation> {
  return new Map(operations.map((operation) => [operation.name, operation]));
}
