/** What the OpenAPI document says of POST /v1/responses, and of the stored responses the gateway does not keep. */
import { Type } from '@sinclair/typebox';
import { ResponseSchema, ResponseStreamEventSchema } from '../../wire/openai-responses.ts';
import { ErrorEnvelopeSchema } from '../../errors/to-envelope.ts';
import { ADMITTED, STREAMING_ADMISSION_HEADERS, errors, jsonOrEvents, type RouteDoc } from '../../wire/route-doc.ts';

/** A failure after the stream began: numbered like the events before it, with the spec's envelope under `error`. */
const StreamErrorEventSchema = Type.Object({
  type: Type.Literal('error'),
  code: Type.String(),
  message: Type.String(),
  param: Type.Union([Type.String(), Type.Null()]),
  sequence_number: Type.Integer({ minimum: 0 }),
  error: ErrorEnvelopeSchema.properties.error,
});

/** The OpenAPI document's word on POST /v1/responses. */
export const responsesDoc: RouteDoc = {
  operationId: 'createResponse',
  summary: 'Create a response (OpenAI Responses API, stateless)',
  description: "OpenAI's Responses API without stored state: send the whole conversation in `input`.",
  tags: ['Responses'],
  credentials: 'bearer',
  headers: Type.Object(STREAMING_ADMISSION_HEADERS),
  responses: {
    200: {
      ...jsonOrEvents("The response; with `stream: true`, OpenAI's named events.", ResponseSchema, {
        description:
          '`event: <type>` and `data: <event>` pairs, each numbered by `sequence_number`, from response.created to response.completed (or response.incomplete). A failure after the first event is the `error` event.',
        data: Type.Union([ResponseStreamEventSchema, StreamErrorEventSchema]),
      }),
      headers: {
        'X-Gateway-Dropped-Tools': Type.String({
          description:
            'The hosted tool types left out of the request, which no provider behind the gateway runs (`web_search, file_search`); absent when none were.',
        }),
      },
    },
    ...errors('openai', ADMITTED, { 404: 'The model alias is unknown (`model_not_found`).' }),
  },
};
