/**
 * An operation as one declarative module: what a route asks of the gateway (a chat completion,
 * embeddings, an Anthropic message, a response) and every fact the gateway needs of it, in one
 * object. The list in index.ts feeds every place that needs "every operation": the routes and
 * their OpenAPI entries, the permissions, the runner a job's kind picks, the span names, the job and
 * usage kinds.
 */
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { PermissionRule } from '../domain/access/roles.ts';
import type { CatalogFile } from '../domain/catalog/schema.ts';
import type { JobCommon } from '../infra/queue/job.ts';
import type { ErrorDialect, RouteDoc } from '../wire/route-doc.ts';
import type { OperationRunner } from './runner.ts';
import type { OperationCache } from './operation-cache.ts';
import type { WebOperation } from './web-operation.ts';

/** A role's right to call an operation (`chat.create`), with its rule. */
export interface OperationPermission<Name extends string = string> extends PermissionRule {
  readonly name: Name;
}

/** The GenAI semantic conventions' `gen_ai.operation.name` of an operation's requests. */
export type GenAiOperationName = 'chat' | 'embeddings';

/** What a side route's answer may read besides its request. */
export interface SideRouteContext {
  catalog: CatalogFile;
}

/** A side route's request: its validated body (undefined on a route without one) and its path parameters. */
export interface SideRequest<Body> {
  body: Body;
  params: Readonly<Record<string, string>>;
}

/**
 * A route of an operation that the web tier answers itself, without a job (Anthropic's token
 * count, the refusal to read a stored response). It takes its operation's permission and dialect.
 */
export interface SideRoute<BodySchema extends TSchema = TSchema> {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly path: string;
  /** Its body's schema; a route with one reads it as its operation's own route does. */
  readonly body?: BodySchema;
  readonly doc: RouteDoc;
  /** The answer's JSON body; a GatewayError thrown is the answer's error. */
  answer(request: SideRequest<Static<BodySchema>>, context: SideRouteContext): unknown;
}

/**
 * One operation: `Kind` names its jobs and usage records, `BodySchema` validates its route's body,
 * `Planned` is the body once resolved, `PayloadSchema` what its job carries besides the common fields,
 * `Permission` the right its routes require.
 */
export interface Operation<
  Kind extends string = string,
  BodySchema extends TSchema = TSchema,
  Planned = unknown,
  PayloadSchema extends TObject = TObject,
  Permission extends string = string,
> {
  /** The job kind and the usage kind of its requests: a job's `operation`, a usage record's. */
  readonly name: Kind;
  readonly method: 'POST';
  /** Its route; an idempotency key's fingerprint includes it, so a key is never reused across routes. */
  readonly path: string;
  readonly body: BodySchema;
  /** Its route's entry in the OpenAPI document. */
  readonly doc: RouteDoc;
  readonly permission: OperationPermission<Permission>;
  /**
   * Whose API it speaks at the door: the envelope of its errors and, for Anthropic's, the key in
   * `x-api-key`, the `request-id` header and the `anthropic-version` check.
   */
  readonly dialect: ErrorDialect;
  /** Its web half: resolution, the texts the PII policy reads, its job payload, its stream framing. */
  readonly web: WebOperation<Static<BodySchema>, Planned, Static<PayloadSchema>>;
  /** What its job carries besides the fields every job has. */
  readonly payload: PayloadSchema;
  /** Its worker half: how its job runs. */
  readonly runner: OperationRunner<JobCommon & Static<PayloadSchema>>;
  /** The name of its requests' spans (`chat svc-flash`). */
  readonly genAiOperation: GenAiOperationName;
  /** Routes of its own the web tier answers without a job. */
  readonly sideRoutes?: readonly SideRoute[];
  /** How its answers are kept in and replayed from the response cache; absent: they never are. */
  readonly cache?: OperationCache<Static<PayloadSchema>>;
}

/** A list of operations, as the web and worker roots are given it. */
export type Operations = readonly Operation[];

/**
 * An operation as its module declares it, its parts checked against each other: the web half
 * reads the body the schema validates and makes the payload the runner reads.
 */
export function defineOperation<const Kind extends string, BodySchema extends TSchema, Planned, PayloadSchema extends TObject, const Permission extends string>(
  operation: Operation<Kind, BodySchema, Planned, PayloadSchema, Permission>,
): Operation<Kind, BodySchema, Planned, PayloadSchema, Permission> {
  return operation;
}
