/** Provider kind → adapter, built once per worker process at startup. */
import type { ProviderAdapter, ProviderTarget } from './types.ts';
import { createOpenAiCompatibleAdapter, type OpenAiCompatibleOptions } from './openai-compatible/index.ts';
import { createSimulatorAdapter } from './simulator/index.ts';

/** The adapters of one process. */
export interface ProviderRegistry {
  /** The adapter serving a catalog target's `provider`. */
  get(kind: ProviderTarget['provider']): ProviderAdapter;
  /** Closes the adapters' connection pools. */
  close(): Promise<void>;
}

/** Builds every adapter once; the simulator's hang fault uses the same headers timeout as real upstreams. */
export function createProviderRegistry(options: OpenAiCompatibleOptions): ProviderRegistry {
  const openAiCompatible = createOpenAiCompatibleAdapter(options);
  const adapters: Record<ProviderTarget['provider'], ProviderAdapter> = {
    'openai-compatible': openAiCompatible,
    simulator: createSimulatorAdapter({ hangTimeoutMs: options.headersTimeoutMs }),
  };
  return {
    get: (kind) => adapters[kind],
    close: () => openAiCompatible.close(),
  };
}
