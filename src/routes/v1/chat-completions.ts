import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ChatCompletionBodySchema } from '../../chat/request-schema.ts';
import { requestShape } from '../../chat/request-shape.ts';
import { resolvePrompt } from '../../chat/resolve-prompt.ts';
import { resolveModel } from '../../chat/resolve-model.ts';
import { readFeature } from '../../chat/feature.ts';
import { buildJob } from '../../chat/build-job.ts';
import { relayJson } from '../../chat/relay-json.ts';
import { relaySse, type SseOptions } from '../../chat/relay-sse.ts';
import type { CompletionDispatcher } from '../../chat/dispatcher.ts';
import type { CatalogFile } from '../../catalog/schema.ts';
import type { PromptCache } from '../../prompts/prompt-cache.ts';
import { rejectOtherMethods } from '../../plugins/errors.ts';

/** What the completion route needs. */
export interface ChatCompletionsOptions {
  catalog: CatalogFile;
  prompts: PromptCache;
  dispatcher: CompletionDispatcher;
  replyChannel: string;
  bodyLimit: number;
  sse: SseOptions;
}

/** POST /v1/chat/completions: validate, resolve prompt and model, enqueue, relay as JSON or SSE. */
export async function chatCompletionsRoutes(app: FastifyInstance, options: ChatCompletionsOptions): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  typed.post(
    '/v1/chat/completions',
    { schema: { body: ChatCompletionBodySchema }, config: { operation: 'chat.create' }, bodyLimit: options.bodyLimit },
    async (request, reply) => {
      const feature = readFeature(request.headers['x-feature']);
      const { tenantId } = request.principal;
      const { request: resolvedRequest, prompt } = await resolvePrompt(options.prompts, tenantId, request.body, requestShape(request.body));
      const resolved = resolveModel(options.catalog, resolvedRequest);
      const job = buildJob(request.id, request.principal, options.replyChannel, resolvedRequest, resolved, { feature, prompt, piiFlags: [] });
      const dispatch = await options.dispatcher.dispatch(job);
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) dispatch.cancel();
      });
      return job.stream ? relaySse(request, reply, dispatch, options.sse) : relayJson(reply, dispatch);
    },
  );
  rejectOtherMethods(app, '/v1/chat/completions', ['POST']);
}
