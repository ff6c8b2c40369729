import { Type } from '@sinclair/typebox';
import {
  API_KEY_ENV_OPTION,
  OPTIONAL_BASE_URL_OPTION,
  ReasoningEffortSchema,
  functionRoleMessage,
  uploadedFilePart,
  type ProviderDescriptor,
} from '../descriptor.ts';

/** Where Anthropic's API is when a model names no `base_url`. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** Anthropic's Messages API (`{base_url}/v1/messages`), translated from and to OpenAI's chat format. */
export const anthropicDescriptor = {
  name: 'anthropic',
  options: {
    ...OPTIONAL_BASE_URL_OPTION,
    ...API_KEY_ENV_OPTION,
    thinking: Type.Optional(
      Type.Union([Type.Literal('budget'), Type.Literal('adaptive')], {
        description:
          "How the model takes reasoning: 'budget' (thinking.budget_tokens, Claude 3.7 to 4.5) or 'adaptive' (thinking.type adaptive with output_config.effort, Claude 4.6 and later). Default 'budget'.",
      }),
    ),
    thinking_display: Type.Optional(
      Type.Union([Type.Literal('summarized'), Type.Literal('omitted')], {
        description: "Adaptive thinking's `display` (Claude 4.7 and later); absent: not sent.",
      }),
    ),
    reasoning_effort: Type.Optional(ReasoningEffortSchema),
    anthropic_beta: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Values of the anthropic-beta header.' })),
  },
  capabilities: { chat: true, stream: true, embed: false, nativeMessages: true },
  params: new Set([
    'max_tokens',
    'max_completion_tokens',
    'temperature',
    'top_p',
    'top_k',
    'n',
    'stop',
    'user',
    'tools',
    'tool_choice',
    'parallel_tool_calls',
    'response_format',
    'reasoning_effort',
  ]),
  // A refusal part can only be an assistant's earlier answer: it goes back as its text.
  contentParts: new Set(['text', 'image_url', 'file', 'refusal']),
  unsupported: (request) => {
    // Anthropic's structured outputs take a schema; it has no schema-less JSON mode.
    if (request.response_format?.type === 'json_object')
      return { param: 'response_format', detail: "type 'json_object'; send type 'json_schema' with a schema" };
    return functionRoleMessage(request) ?? uploadedFilePart(request);
  },
  telemetry: { system: () => 'anthropic', defaultBaseUrl: ANTHROPIC_BASE_URL },
} as const satisfies ProviderDescriptor;
