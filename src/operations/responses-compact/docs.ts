/** What the OpenAPI document says of POST /v1/responses/compact. */
import { Type } from '@sinclair/typebox';
import { CompactedResponseSchema } from '../../wire/openai-responses-compact.ts';
import { ADMISSION_HEADERS, ADMITTED, errors, json, type RouteDoc } from '../../wire/route-doc.ts';

/** The OpenAPI document's word on the route. */
export const compactDoc: RouteDoc = {
  operationId: 'compactResponse',
  summary: 'Compact a conversation (OpenAI Responses API)',
  description:
    "OpenAI's compaction of a Responses conversation: the model summarizes `input`, and the answer is its user messages followed by one `compaction` item, to send back as the start of the next request's `input`. The compaction item carries the summary, readable by this gateway's /v1/responses whichever provider serves it.",
  tags: ['Responses'],
  credentials: 'bearer',
  headers: Type.Object(ADMISSION_HEADERS),
  responses: {
    200: json("The user messages of the input, then the compaction item; `usage` is the summary call's.", CompactedResponseSchema),
    ...errors('openai', ADMITTED, {
      400: 'An invalid body, `previous_response_id`, or a compaction item this gateway did not make (`invalid_value`); `param` names the field.',
      404: 'The model alias is unknown (`model_not_found`).',
      422: 'A conversation longer than the model takes (`context_length_exceeded`), or a model that cannot serve it (`unsupported_parameter`).',
    }),
  },
};
