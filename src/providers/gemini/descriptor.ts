import { Type } from '@sinclair/typebox';
import {
  API_KEY_ENV_OPTION,
  OPTIONAL_BASE_URL_OPTION,
  ReasoningEffortSchema,
  functionRoleMessage,
  uploadedFilePart,
  type ProviderDescriptor,
} from '../descriptor.ts';
import { inputTexts } from '../shared/embeddings.ts';

/** The public endpoint, used when the catalog entry has no `base_url`. */
export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';

/** Google's Gemini API (`{base_url}/v1beta/models/{model}:generateContent`), translated from and to OpenAI's chat format. */
export const geminiDescriptor = {
  name: 'gemini',
  options: {
    ...OPTIONAL_BASE_URL_OPTION,
    ...API_KEY_ENV_OPTION,
    thinking: Type.Optional(
      Type.Union([Type.Literal('budget'), Type.Literal('level')], {
        description:
          "How the model takes reasoning: 'budget' (thinkingConfig.thinkingBudget, Gemini 2.5) or 'level' (thinkingConfig.thinkingLevel, Gemini 3). Default 'budget'.",
      }),
    ),
    reasoning_effort: Type.Optional(ReasoningEffortSchema),
  },
  capabilities: { chat: true, stream: true, embed: true, nativeMessages: false },
  params: new Set([
    'max_tokens',
    'max_completion_tokens',
    'temperature',
    'top_p',
    'top_k',
    'n',
    'stop',
    'seed',
    'user',
    'presence_penalty',
    'frequency_penalty',
    'tools',
    'tool_choice',
    'response_format',
    'reasoning_effort',
  ]),
  // A refusal part can only be an assistant's earlier answer: it goes back as its text.
  contentParts: new Set(['text', 'image_url', 'input_audio', 'file', 'refusal']),
  unsupported: (request) => functionRoleMessage(request) ?? uploadedFilePart(request),
  unsupportedEmbedding: (request) => (inputTexts(request.input) === null ? { param: 'input', detail: 'token arrays; Gemini embeds text' } : null),
  telemetry: { system: () => 'gcp.gemini', defaultBaseUrl: GEMINI_BASE_URL },
} as const satisfies ProviderDescriptor;
