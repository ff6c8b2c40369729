/**
 * The shape of a model's catalog entry, owned by the providers: the fields every model has, and one
 * provider's entry as those fields with its descriptor's options. A provider's adapter is typed by its own
 * entry from here, and the catalog's schema (src/domain/catalog/schema.ts) builds its union from the same
 * pieces, so the imports point one way: the catalog to the providers.
 */
import { Type, type Static, type TLiteral, type TObject, type TString } from '@sinclair/typebox';
import type { ProviderDescriptor } from './descriptor.ts';

/** What a model serves: chat (completions, messages, responses), or embeddings. */
export const MODEL_MODES = ['chat', 'embeddings'] as const;

/** What every model of the catalog has, whatever its provider. */
export const MODEL_FIELDS = {
  upstream_model: Type.String({ minLength: 1 }),
  mode: Type.Optional(
    Type.Union(
      MODEL_MODES.map((mode) => Type.Literal(mode)),
      { description: "What the model serves; absent: 'chat'." },
    ),
  ),
  context_window: Type.Integer({ minimum: 1, description: "The prompt and the answer together; for an embeddings model, each input's tokens." }),
  max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, description: 'Required for a chat model.' })),
  input_price_per_mtok: Type.Number({ minimum: 0, description: 'Currency units per million prompt tokens.' }),
  output_price_per_mtok: Type.Optional(Type.Number({ minimum: 0, description: 'Currency units per million completion tokens; required for a chat model.' })),
  cache_read_price_per_mtok: Type.Optional(
    Type.Number({ minimum: 0, description: "Per million prompt tokens read from the provider's cache; absent: the input price." }),
  ),
  cache_write_price_per_mtok: Type.Optional(
    Type.Number({ minimum: 0, description: "Per million prompt tokens written to the provider's cache; absent: the input price." }),
  ),
  batch_price: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'A batch line costs this fraction of the live prices; absent: 1 (the live price).' }),
  ),
  rejected_params: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  context_window_fallback: Type.Optional(
    Type.String({
      minLength: 1,
      description: 'A chat model with a larger window that takes a prompt too long for this one, instead of a 422; absent: the 422.',
    }),
  ),
  timeouts: Type.Optional(
    Type.Object(
      {
        connect_ms: Type.Optional(
          Type.Integer({
            minimum: 1,
            description: "TCP and TLS to the deployment's origin (the shortest of the models sharing an origin); absent: UPSTREAM_CONNECT_TIMEOUT_MS.",
          }),
        ),
        first_token_ms: Type.Optional(
          Type.Integer({
            minimum: 1,
            description: "From sending the call to its first token (a stream's first chunk, a plain answer's headers); absent: UPSTREAM_HEADERS_TIMEOUT_MS.",
          }),
        ),
        between_tokens_ms: Type.Optional(
          Type.Integer({ minimum: 1, description: 'The longest silence between two chunks of an answer; absent: UPSTREAM_BODY_TIMEOUT_MS.' }),
        ),
        total_ms: Type.Optional(
          Type.Integer({ minimum: 1, description: 'One attempt, from sending to the last byte; absent: what is left of RETRY_BUDGET_MS.' }),
        ),
      },
      { additionalProperties: false, description: "This model's limits on one call, each within what is left of the request's retry budget." },
    ),
  ),
  breaker: Type.Optional(
    Type.Object(
      {
        failure_rate: Type.Optional(
          Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'Share of failed calls in the window that opens it; absent: 0.5.' }),
        ),
        min_calls: Type.Optional(Type.Integer({ minimum: 1, description: 'Calls in the window before the share counts; absent: 10.' })),
        window_s: Type.Optional(Type.Integer({ minimum: 1, description: 'The sliding window, seconds; absent: 30.' })),
        cooldown_s: Type.Optional(
          Type.Number({
            exclusiveMinimum: 0,
            description: 'How long it stays open before one probe; absent: 30. Doubled at each failed probe, up to 10 minutes.',
          }),
        ),
      },
      { additionalProperties: false, description: "Each deployment's circuit breaker." },
    ),
  ),
};

/** The schema of one provider's entry: its `provider` name, the common fields and its own options. */
export type ModelSchema<D> = D extends ProviderDescriptor ? TObject<{ provider: TLiteral<D['name']> } & typeof MODEL_FIELDS & D['options']> : never;

/** The catalog entry of one provider kind: the common fields and the provider's options, nothing else. */
export function modelSchema<D extends ProviderDescriptor>(descriptor: D): ModelSchema<D> {
  return Type.Object(
    { provider: Type.Literal(descriptor.name), ...MODEL_FIELDS, ...descriptor.options },
    { additionalProperties: false },
  ) as unknown as ModelSchema<D>;
}

/**
 * An entry as the loader gives it: a chat model has its output fields (the loader refuses one without),
 * and an embeddings model, which produces no tokens, gets 0 for them.
 */
export type LoadedModel<M> = M & { max_output_tokens: number; output_price_per_mtok: number };

/** The loaded catalog entry of the provider that `D` describes. */
export type ModelOf<D extends ProviderDescriptor> = LoadedModel<Static<ModelSchema<D>>>;

/** A loaded entry of any provider, as far as every provider's has it: what the seam between worker and adapters is typed by. */
export type AnyModel = LoadedModel<Static<TObject<{ provider: TString } & typeof MODEL_FIELDS>>>;
