/** What the OpenAPI document says of POST /v1/embeddings. */
import { Type } from '@sinclair/typebox';
import { EmbeddingsResponseSchema } from '../../wire/openai-embeddings.ts';
import { ADMISSION_HEADERS, ADMITTED, errors, json, type RouteDoc } from '../../wire/route-doc.ts';

/** The OpenAPI document's word on the route. */
export const embeddingsDoc: RouteDoc = {
  operationId: 'createEmbeddings',
  summary: 'Create embeddings',
  description: "OpenAI's embeddings request, for a catalog model of mode `embeddings`.",
  tags: ['Embeddings'],
  credentials: 'bearer',
  headers: Type.Object(ADMISSION_HEADERS),
  responses: {
    200: json('The vectors in input order (`base64`: little-endian float32).', EmbeddingsResponseSchema),
    ...errors('openai', ADMITTED, {
      400: 'An invalid body, or a model that is not an embeddings model (`unsupported_model`); `param` names the field.',
      404: 'The model alias is unknown (`model_not_found`).',
    }),
  },
};
