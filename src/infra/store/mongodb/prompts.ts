/** Named, versioned prompts in MongoDB: `prompt_heads` holds each name's counters, `prompt_versions` the versions. */
import { Schema, type Connection, type Model } from 'mongoose';
import { PromptNotFoundError, type PromptMessageTemplate, type PromptRepository, type PromptSummary, type PromptVersion } from '../repository.ts';

/** A name's head: the last number handed out and the active one (0 until the first version is stored). */
export interface PromptHeadDocument {
  tenant_id: string;
  name: string;
  last_version: number;
  active_version: number;
}

/** One immutable version. */
export interface PromptVersionDocument {
  tenant_id: string;
  name: string;
  version: number;
  messages: PromptMessageTemplate[];
  model: string;
  parameters: Record<string, unknown>;
  variables: string[];
  created_at: Date;
  created_by: string;
}

/** The prompt models of one connection. */
export interface PromptModels {
  PromptHead: Model<PromptHeadDocument>;
  PromptVersion: Model<PromptVersionDocument>;
}

// MongoDB server error code for a unique index violation.
const DUPLICATE_KEY = 11000;

const headSchema = new Schema<PromptHeadDocument>(
  {
    tenant_id: { type: String, required: true },
    name: { type: String, required: true },
    last_version: { type: Number, required: true },
    active_version: { type: Number, required: true },
  },
  { collection: 'prompt_heads', versionKey: false },
);
headSchema.index({ tenant_id: 1, name: 1 }, { unique: true });

const versionSchema = new Schema<PromptVersionDocument>(
  {
    tenant_id: { type: String, required: true },
    name: { type: String, required: true },
    version: { type: Number, required: true },
    messages: { type: Schema.Types.Mixed, required: true },
    model: { type: String, required: true },
    parameters: { type: Schema.Types.Mixed, required: true },
    variables: { type: [String], required: true },
    created_at: { type: Date, required: true },
    created_by: { type: String, required: true },
  },
  // minimize: false keeps `parameters: {}`, which mongoose would otherwise drop.
  { collection: 'prompt_versions', versionKey: false, minimize: false },
);
versionSchema.index({ tenant_id: 1, name: 1, version: -1 }, { unique: true });

function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === DUPLICATE_KEY;
}

function toPromptVersion(doc: PromptVersionDocument): PromptVersion {
  return {
    tenantId: doc.tenant_id,
    name: doc.name,
    version: doc.version,
    messages: doc.messages,
    model: doc.model,
    parameters: doc.parameters,
    variables: doc.variables,
    createdAt: doc.created_at,
    createdBy: doc.created_by,
  };
}

/** Compiles the prompt models on `connection`. */
export function createPromptModels(connection: Connection): PromptModels {
  return {
    PromptHead: connection.model<PromptHeadDocument>('PromptHead', headSchema),
    PromptVersion: connection.model<PromptVersionDocument>('PromptVersion', versionSchema),
  };
}

/** Takes the next version number of a name, creating its head at 0 when new. */
async function nextVersion({ PromptHead }: PromptModels, tenantId: string, name: string): Promise<number> {
  const bump = () =>
    PromptHead.findOneAndUpdate(
      { tenant_id: tenantId, name },
      { $inc: { last_version: 1 }, $setOnInsert: { active_version: 0 } },
      { upsert: true, returnDocument: 'after' },
    )
      .lean<PromptHeadDocument>()
      .exec();
  // Two first-ever upserts can race to insert the head; the loser retries and increments instead.
  const head = await bump().catch((error: unknown) => (isDuplicateKey(error) ? bump() : Promise.reject(error)));
  if (!head) throw new Error(`Prompt '${name}': upsert returned no head.`);
  return head.last_version;
}

/** The PromptRepository over `models`. */
export function createPromptRepository(models: PromptModels): PromptRepository {
  const { PromptHead, PromptVersion } = models;
  const findVersion = (tenantId: string, name: string, version: number) =>
    PromptVersion.findOne({ tenant_id: tenantId, name, version }).lean<PromptVersionDocument>().exec();
  return {
    async createVersion(input) {
      const version = await nextVersion(models, input.tenantId, input.name);
      const doc: PromptVersionDocument = {
        tenant_id: input.tenantId,
        name: input.name,
        version,
        messages: input.messages,
        model: input.model,
        parameters: input.parameters,
        variables: input.variables,
        created_at: new Date(),
        created_by: input.createdBy,
      };
      await PromptVersion.create(doc);
      // Without a transaction the head moves after the version exists. `$lt` keeps a slower
      // create from taking the active slot back from a newer version activated meanwhile.
      if (input.activate || version === 1) {
        await PromptHead.updateOne(
          { tenant_id: input.tenantId, name: input.name, active_version: input.activate ? { $lt: version } : 0 },
          { $set: { active_version: version } },
        ).exec();
      }
      return toPromptVersion(doc);
    },
    async activate(tenantId, name, version) {
      const doc = await findVersion(tenantId, name, version);
      if (!doc) {
        const known = await PromptHead.exists({ tenant_id: tenantId, name });
        throw known ? new PromptNotFoundError(name, version) : new PromptNotFoundError(name);
      }
      await PromptHead.updateOne({ tenant_id: tenantId, name }, { $set: { active_version: version } }).exec();
      return toPromptVersion(doc);
    },
    async getActive(tenantId, name) {
      const head = await PromptHead.findOne({ tenant_id: tenantId, name }).lean<PromptHeadDocument>().exec();
      if (!head || head.active_version === 0) return null;
      const doc = await findVersion(tenantId, name, head.active_version);
      return doc ? toPromptVersion(doc) : null;
    },
    async history(tenantId, name) {
      const head = await PromptHead.findOne({ tenant_id: tenantId, name }).lean<PromptHeadDocument>().exec();
      if (!head) return null;
      const docs = await PromptVersion.find({ tenant_id: tenantId, name }).sort({ version: -1 }).lean<PromptVersionDocument[]>().exec();
      if (docs.length === 0) return null;
      return { name, activeVersion: head.active_version, versions: docs.map(toPromptVersion) };
    },
    async list(tenantId) {
      // A head's last_version may name a version whose insert never happened (nextVersion, then a
      // crash): the newest version is the one stored, and a head with none is no prompt yet.
      const [heads, newest] = await Promise.all([
        PromptHead.find({ tenant_id: tenantId }).sort({ name: 1 }).lean<PromptHeadDocument[]>().exec(),
        PromptVersion.aggregate<{ _id: string; version: number; created_at: Date }>([
          { $match: { tenant_id: tenantId } },
          { $sort: { name: 1, version: -1 } },
          { $group: { _id: '$name', version: { $first: '$version' }, created_at: { $first: '$created_at' } } },
        ]).exec(),
      ]);
      const newestByName = new Map(newest.map((entry) => [entry._id, entry]));
      return heads.flatMap((head): PromptSummary[] => {
        const latest = newestByName.get(head.name);
        if (!latest || head.active_version === 0) return [];
        return [{ name: head.name, activeVersion: head.active_version, latestVersion: latest.version, updatedAt: latest.created_at }];
      });
    },
  };
}
