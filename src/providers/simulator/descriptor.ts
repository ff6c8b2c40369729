import { Type, type Static } from '@sinclair/typebox';
import type { ProviderDescriptor } from '../descriptor.ts';

/** Options of the built-in simulator provider. */
export const SimulatorOptionsSchema = Type.Object(
  {
    latency_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'Delay before the first token.' })),
    tokens_per_second: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Streaming rate; absent means as fast as possible.' })),
    completion_tokens: Type.Optional(Type.Integer({ minimum: 1, description: 'Length of the answer when max_tokens does not cap it.' })),
    dimensions: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 8192, description: "An embeddings model's vector length when the request names none (default 256)." }),
    ),
    fault: Type.Optional(
      Type.Object(
        {
          kind: Type.Union([Type.Literal('429'), Type.Literal('500'), Type.Literal('timeout'), Type.Literal('broken_stream')]),
          rate: Type.Number({ minimum: 0, maximum: 1, description: 'Probability of the fault per call.' }),
          retry_after_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Options of a simulator model. */
export type SimulatorOptions = Static<typeof SimulatorOptionsSchema>;

/** The simulator: deterministic text and vectors for development, tests and benchmarks; it ignores every parameter but the token cap and `dimensions`. */
export const simulatorDescriptor = {
  name: 'simulator',
  options: { simulator: Type.Optional(SimulatorOptionsSchema) },
  capabilities: { chat: true, stream: true, embed: true, nativeMessages: false },
  params: null,
  contentParts: null,
  telemetry: { system: () => 'simulator', defaultBaseUrl: null },
} as const satisfies ProviderDescriptor;
