/** How a worker runs an embeddings request: one call, the vectors as one `result` event. */
import type { EmbeddingsJob } from './payload.ts';
import { inputItems, inputTokens } from '../../providers/shared/embeddings.ts';
import type { OperationRunner } from '../runner.ts';

/** The embeddings operation, worker half. */
export const embeddingsRunner: OperationRunner<EmbeddingsJob> = {
  async run(ctx) {
    const { value: response, target } = await ctx.attempt(
      (target, timeoutMs) => ctx.providers.embed({ target, body: ctx.data.body, signal: ctx.signal, timeoutMs }),
      () => true,
    );
    if (response.usage) ctx.trace.reported = { prompt_tokens: response.usage.prompt_tokens, completion_tokens: 0, total_tokens: response.usage.prompt_tokens };
    const { usage } = ctx.usage();
    const body = { ...response, model: target.alias, usage: { prompt_tokens: usage.prompt_tokens, total_tokens: usage.total_tokens } };
    return { type: 'result', payload: JSON.stringify(body) };
  },
  countPrompt: (data) => inputTokens(inputItems(data.body.input)),
  // Embeddings never stream.
  readChunk: () => ({ text: '', model: null }),
};
