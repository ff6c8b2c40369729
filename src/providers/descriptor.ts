/** What a provider declares about itself; the catalog schema and the registry are built from these. */
import { Type, type TProperties } from '@sinclair/typebox';

/** Which operations a provider serves. */
export interface ProviderCapabilities {
  readonly chat: boolean;
  readonly stream: boolean;
  readonly embed: boolean;
}

/** One provider kind: its catalog options, capabilities and the OpenAI parameters it honours. */
export interface ProviderDescriptor<Name extends string = string, Options extends TProperties = TProperties> {
  /** The catalog's `provider` value. */
  readonly name: Name;
  /** Catalog fields of this provider's models, besides the ones every model has (src/catalog/schema.ts). */
  readonly options: Options;
  readonly capabilities: ProviderCapabilities;
  /**
   * The OpenAI chat parameters it can honour, besides `messages`; a request with another one
   * is refused at the door (422 `unsupported_parameter`). Null: every parameter is forwarded.
   */
  readonly params: ReadonlySet<string> | null;
  /** The content part types it can take (`text`, `image_url`, …); null: every type is forwarded. */
  readonly contentParts: ReadonlySet<string> | null;
}

/** The catalog fields of a provider reached over HTTP with a key from the environment. */
export const API_KEY_ENV_OPTION = {
  api_key_env: Type.Optional(Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$', description: 'Environment variable holding the provider key.' })),
};

/** A provider's `base_url` when it has a public default. */
export const OPTIONAL_BASE_URL_OPTION = {
  base_url: Type.Optional(Type.String({ pattern: '^https?://', description: "Where the provider's API is; absent: its public endpoint." })),
};
