/** What the OpenAPI document says of POST /v1/chat/completions. */
import { Type } from '@sinclair/typebox';
import { ChatCompletionChunkSchema, ChatCompletionSchema } from '../../wire/openai-chat.ts';
import { ADMITTED, ErrorEnvelopeRef, STREAMING_ADMISSION_HEADERS, errors, jsonOrEvents, type RouteDoc } from '../../wire/route-doc.ts';

/** A completion as the gateway answers it: OpenAI's, with the spec's `request_id`. */
export const ChatCompletionResponseSchema = Type.Composite([ChatCompletionSchema, Type.Object({ request_id: Type.String({ pattern: '^req_' }) })], {
  additionalProperties: true,
});

/** The OpenAPI document's word on the route. */
export const chatDoc: RouteDoc = {
  operationId: 'createChatCompletion',
  summary: 'Create a chat completion',
  description: "OpenAI's chat completions request, or a named prompt (`prompt` and `variables` instead of `model` and `messages`).",
  tags: ['Chat'],
  credentials: 'bearer',
  headers: Type.Object(STREAMING_ADMISSION_HEADERS),
  responses: {
    200: jsonOrEvents('The completion; with `stream: true`, its chunks as server-sent events.', ChatCompletionResponseSchema, {
      description:
        '`data: <chunk>` lines, each with an `id:` line to resume from, ending with `data: [DONE]`. A failure after the first chunk is one `data:` line with the error envelope, and the end of the stream.',
      data: Type.Union([ChatCompletionChunkSchema, ErrorEnvelopeRef]),
    }),
    ...errors('openai', ADMITTED, { 404: 'The model alias or the prompt name is unknown (`model_not_found`, `prompt_not_found`).' }),
  },
};
