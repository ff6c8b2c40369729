/** The Repository over MongoDB via mongoose, on a dedicated connection. */
import mongoose from 'mongoose';
import type { Repository } from '../repository.ts';
import { createAuditModels, createAuditRepository } from './audit.ts';
import { createBatchModels } from './batch-models.ts';
import { createBatchRepository } from './batches.ts';
import { createBudgetModels, createBudgetRepository } from './budgets.ts';
import { createFileModels, createFileRepository } from './files.ts';
import { createPolicyModels, createPolicyRepository } from './policies.ts';
import { createModels } from './models.ts';
import { createPromptModels, createPromptRepository } from './prompts.ts';
import { createResponseModels } from './response-models.ts';
import { createResponseRepository } from './responses.ts';
import { createApiKeyRepository, createTenantRepository } from './tenants-keys.ts';
import { createUsageModel, createUsageRepository } from './usage.ts';
import { createWebhookModels, createWebhookRepository } from './webhooks.ts';

/** Connects (failing within 5 s when MongoDB is unreachable) and returns the Repository. */
export async function createMongoRepository(uri: string): Promise<Repository> {
  const connection = mongoose.createConnection(uri, {
    maxPoolSize: 10,
    serverSelectionTimeoutMS: 5_000,
    // Indexes are built by migrate() (the release step), not as a side effect of every boot;
    // and with no buffering an outage is an error at once rather than a queued operation.
    autoIndex: false,
    bufferCommands: false,
  });
  try {
    await connection.asPromise();
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
  const models = createModels(connection);
  const promptModels = createPromptModels(connection);
  const usageModel = createUsageModel(connection);
  const auditModels = createAuditModels(connection);
  const budgetModels = createBudgetModels(connection);
  const policyModels = createPolicyModels(connection);
  const responseModels = createResponseModels(connection);
  const webhookModels = createWebhookModels(connection);
  const fileModels = createFileModels(connection);
  const batchModels = createBatchModels(connection);
  const indexed = [
    models.Tenant,
    models.ApiKey,
    promptModels.PromptHead,
    promptModels.PromptVersion,
    usageModel,
    auditModels.EventModel,
    auditModels.HeadModel,
    budgetModels.PolicyModel,
    budgetModels.TopUpModel,
    budgetModels.PlanModel,
    policyModels.Pii,
    policyModels.Data,
    responseModels.Responses,
    responseModels.Items,
    webhookModels.EndpointModel,
    webhookModels.DeliveryModel,
    fileModels.Files,
    fileModels.Uploads,
    batchModels.Batches,
    batchModels.Results,
  ];
  return {
    kind: 'mongodb',
    tenants: createTenantRepository(models),
    apiKeys: createApiKeyRepository(models),
    prompts: createPromptRepository(promptModels),
    usage: createUsageRepository(usageModel),
    audit: createAuditRepository(auditModels),
    budgets: createBudgetRepository(budgetModels),
    policies: createPolicyRepository(policyModels),
    responses: createResponseRepository(responseModels, policyModels.Data),
    webhooks: createWebhookRepository(webhookModels),
    files: createFileRepository(connection, fileModels),
    batches: createBatchRepository(batchModels),
    async migrate() {
      for (const model of indexed) await model.syncIndexes();
    },
    async ping() {
      const db = connection.db;
      if (!db) throw new Error('MongoDB connection is not open.');
      await db.command({ ping: 1 });
    },
    async close() {
      await connection.close();
    },
  };
}
