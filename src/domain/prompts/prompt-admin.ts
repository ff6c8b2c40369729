import { Type, type Static } from '@sinclair/typebox';
import type { Repository, PromptVersion } from '../../infra/store/repository.ts';
import { PromptNotFoundError } from '../../infra/store/repository.ts';
import type { CatalogFile } from '../catalog/schema.ts';
import { candidatesOf } from '../catalog/load-catalog.ts';
import { InvalidValueError, ModelNotFoundError, UnknownPromptError } from '../../errors/gateway-error.ts';
import { ChatRequestSchema } from '../../wire/openai-chat.ts';
import { auditEvent, type AuditSink } from '../audit/audit-event.ts';
import { templateVariables } from './template.ts';

/**
 * The parameters a prompt version may register: OpenAI's chat parameters (src/wire/openai-chat.ts),
 * minus the messages; the model and the delivery fields (`stream`, `stream_options`) are the request's.
 */
export const PromptParametersSchema = Type.Composite([Type.Partial(Type.Omit(ChatRequestSchema, ['messages']))], { additionalProperties: true });

/** The body of a new prompt version (internal API and CLI). */
export const PromptVersionInputSchema = Type.Object(
  {
    messages: Type.Array(
      Type.Object(
        { role: Type.Union(['system', 'developer', 'user', 'assistant'].map((r) => Type.Literal(r))), content: Type.String() },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
    model: Type.String({ minLength: 1 }),
    parameters: Type.Optional(PromptParametersSchema),
    activate: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** A new prompt version as sent. */
export type PromptVersionInput = Static<typeof PromptVersionInputSchema>;

/** What prompt administration needs: the store, the catalog to check models, the audit log, cache invalidation. */
export interface PromptAdminDeps {
  repository: Repository;
  /** Null when the caller has no catalog (the CLI without CATALOG): models are then not checked. */
  catalog: CatalogFile | null;
  audit: AuditSink;
  invalidate(tenantId: string, name: string): Promise<void>;
}

/** Who acts, for the audit log. */
export interface Actor {
  actor: string;
  requestId: string | null;
}

const NOT_PARAMETERS = ['stream', 'stream_options', 'prompt', 'variables', 'model', 'messages'];

/** Stores a new version (checked against the catalog), audits it, and invalidates caches when it became active. */
export async function createPromptVersion(deps: PromptAdminDeps, tenantId: string, name: string, input: PromptVersionInput, by: Actor): Promise<PromptVersion> {
  if (deps.catalog && !candidatesOf(deps.catalog, input.model)) throw new ModelNotFoundError(input.model);
  const parameters = (input.parameters ?? {}) as Record<string, unknown>;
  const wrong = NOT_PARAMETERS.find((key) => key in parameters);
  if (wrong) throw new InvalidValueError(`parameters.${wrong}`, `'${wrong}' is not a prompt parameter.`);
  const before = await deps.repository.prompts.getActive(tenantId, name);
  const version = await deps.repository.prompts.createVersion({
    tenantId,
    name,
    messages: input.messages,
    model: input.model,
    parameters,
    variables: templateVariables(input.messages),
    createdBy: by.actor,
    activate: input.activate === true,
  });
  await deps.audit(
    auditEvent({
      tenantId,
      actor: by.actor,
      action: 'prompt.version_created',
      target: `prompt:${name}@${version.version}`,
      outcome: 'success',
      requestId: by.requestId,
      details: { model: version.model },
    }),
  );
  const active = await deps.repository.prompts.getActive(tenantId, name);
  if (active?.version === version.version && before?.version !== version.version) {
    await deps.audit(
      auditEvent({
        tenantId,
        actor: by.actor,
        action: 'prompt.activated',
        target: `prompt:${name}@${version.version}`,
        outcome: 'success',
        requestId: by.requestId,
        details: { previous: before?.version ?? null },
      }),
    );
    await deps.invalidate(tenantId, name);
  }
  return version;
}

/** Makes a version active (a rollback when it is older), audits it, and invalidates every web process's cache. */
export async function activatePromptVersion(deps: PromptAdminDeps, tenantId: string, name: string, versionNumber: number, by: Actor): Promise<PromptVersion> {
  const before = await deps.repository.prompts.getActive(tenantId, name);
  let version: PromptVersion;
  try {
    version = await deps.repository.prompts.activate(tenantId, name, versionNumber);
  } catch (error) {
    if (error instanceof PromptNotFoundError) throw new UnknownPromptError(name, before ? versionNumber : undefined);
    throw error;
  }
  await deps.audit(
    auditEvent({
      tenantId,
      actor: by.actor,
      action: 'prompt.activated',
      target: `prompt:${name}@${versionNumber}`,
      outcome: 'success',
      requestId: by.requestId,
      details: { previous: before?.version ?? null },
    }),
  );
  await deps.invalidate(tenantId, name);
  return version;
}

/** A prompt version on the wire. */
export function promptVersionJson(version: PromptVersion, activeVersion?: number) {
  return {
    object: 'prompt.version',
    name: version.name,
    version: version.version,
    ...(activeVersion === undefined ? {} : { active: version.version === activeVersion }),
    model: version.model,
    parameters: version.parameters,
    messages: version.messages,
    variables: version.variables,
    created_at: version.createdAt.toISOString(),
    created_by: version.createdBy,
  };
}
