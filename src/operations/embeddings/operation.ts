/** POST /v1/embeddings on the web tier (the web half of the operation): one embeddings model, its inputs' texts for the PII policy, one JSON answer. */
import { estimateTokens } from '../../providers/shared/tokens.ts';
import { inputItems } from '../../providers/shared/embeddings.ts';
import { openAiDataFraming } from '../sse-framing.ts';
import type { EmbeddingsBody } from '../../wire/openai-embeddings.ts';
import type { WebOperation } from '../web-operation.ts';
import type { TextReplacer } from '../../domain/pii/apply-policy.ts';
import type { EmbeddingsPayload } from './payload.ts';
import { resolveEmbeddingsModel } from './resolve-model.ts';

/** Each input text through `replace`; token arrays are not text, and pass as they are. */
function mapInputTexts(input: EmbeddingsBody['input'], replace: TextReplacer): EmbeddingsBody['input'] {
  if (typeof input === 'string') return replace(input, 'input');
  if (typeof input[0] !== 'string') return input;
  return (input as string[]).map((text, i) => replace(text, `input[${i}]`));
}

/** The embeddings operation, web half. */
export const embeddingsWeb: WebOperation<EmbeddingsBody, EmbeddingsBody, EmbeddingsPayload> = {
  framing: openAiDataFraming,
  plan(body, context) {
    const model = resolveEmbeddingsModel(context.catalog, body);
    const items = inputItems(body.input);
    const bytes = items.reduce((sum, item) => sum + (typeof item === 'string' ? Buffer.byteLength(item) : 0), 0);
    const tokenArrays = items.reduce((sum, item) => sum + (typeof item === 'string' ? 0 : item.length), 0);
    return {
      body,
      requestedModel: body.model,
      candidates: [model],
      // Token arrays count exactly; only texts are estimated.
      promptTokens: bytes === 0 ? tokenArrays : undefined,
      promptEstimate: estimateTokens(bytes) + tokenArrays,
      // A text's bytes bound its tokens, whatever the provider's tokenizer.
      promptBound: bytes + tokenArrays,
      maxOutputTokens: 0,
      stream: false,
      prompt: null,
    };
  },
  mapTexts: (body, replace) => ({ ...body, input: mapInputTexts(body.input, replace) }),
  jobPayload(body) {
    const { model: _model, ...forwarded } = body;
    return { body: forwarded };
  },
};
