/** POST /v1/embeddings: OpenAI's embeddings, for a catalog model of mode `embeddings`. */
import { MODEL_ROLES } from '../../domain/access/roles.ts';
import { EmbeddingsBodySchema } from '../../wire/openai-embeddings.ts';
import { defineOperation } from '../operation.ts';
import { embeddingsDoc } from './docs.ts';
import { embeddingsWeb } from './operation.ts';
import { EmbeddingsPayloadSchema } from './payload.ts';
import { embeddingsRunner } from './run.ts';

/** The embeddings operation. */
export const embeddings = defineOperation({
  name: 'embeddings',
  method: 'POST',
  path: '/v1/embeddings',
  body: EmbeddingsBodySchema,
  doc: embeddingsDoc,
  permission: { name: 'embeddings.create', roles: MODEL_ROLES, describe: 'create embeddings' },
  dialect: 'openai',
  web: embeddingsWeb,
  payload: EmbeddingsPayloadSchema,
  runner: embeddingsRunner,
  genAiOperation: 'embeddings',
});
