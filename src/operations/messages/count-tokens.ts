/** POST /v1/messages/count_tokens: counted on the web tier by the gateway's tokenizer, at no cost. */
import { CountTokensRequestSchema } from '../../wire/anthropic-messages.ts';
import type { SideRoute } from '../operation.ts';
import { chatCandidatesOf } from '../chat/resolve-model.ts';
import { countTokensDoc } from './docs.ts';
import { countPromptTokens } from './prompt-text.ts';

const PATH = '/v1/messages/count_tokens';

/** A message request's input tokens, for a model the catalog knows; no upstream call, budget or usage record. */
export const countTokensRoute: SideRoute<typeof CountTokensRequestSchema> = {
  method: 'POST',
  path: PATH,
  body: CountTokensRequestSchema,
  doc: countTokensDoc,
  answer({ body }, { catalog }) {
    chatCandidatesOf(catalog, body.model, PATH);
    return { input_tokens: countPromptTokens(body) };
  },
};
