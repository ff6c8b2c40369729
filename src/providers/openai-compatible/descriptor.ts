import { Type } from '@sinclair/typebox';
import { API_KEY_ENV_OPTION, type ProviderDescriptor } from '../descriptor.ts';

/** Azure OpenAI's addressing: a deployment in the path, an `api-version` query, an `api-key` header. */
export const AzureOptionsSchema = Type.Object(
  {
    api_version: Type.String({ minLength: 1, description: "The `api-version` query parameter, e.g. '2024-10-21'." }),
    deployment: Type.Optional(Type.String({ minLength: 1, description: 'The deployment name; absent: upstream_model.' })),
  },
  { additionalProperties: false },
);

/** OpenAI and every server of its wire format (Azure OpenAI, vLLM, Ollama, Groq…): the request passes through as sent. */
export const openAiCompatibleDescriptor = {
  name: 'openai-compatible',
  options: {
    base_url: Type.String({ pattern: '^https?://', description: "The API root, e.g. 'https://api.openai.com/v1'; for Azure, the resource's endpoint." }),
    ...API_KEY_ENV_OPTION,
    azure: Type.Optional(AzureOptionsSchema),
  },
  capabilities: { chat: true, stream: true, embed: true, nativeMessages: false },
  params: null,
  contentParts: null,
  // Azure OpenAI's addressing is declared in the catalog; every other server of the format is OpenAI's.
  telemetry: { system: (model) => (model.azure ? 'azure.ai.openai' : 'openai'), defaultBaseUrl: null },
} as const satisfies ProviderDescriptor;
