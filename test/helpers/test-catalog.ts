/** Catalogs for tests: every model served by a loopback fake upstream or the simulator. */
import type { WrittenCatalog } from '../../src/domain/catalog/schema.ts';
import type { ModelOf } from '../../src/providers/model.ts';
import type { openAiCompatibleDescriptor } from '../../src/providers/openai-compatible/descriptor.ts';

// The suites on these models script runs of failures to test retries and fallbacks; a breaker
// opened by one test would change the next. The breakers have catalogs of their own (test/e2e/deployment-pools.test.ts).
const NO_BREAKER = { min_calls: 1_000_000 };

function upstreamModel(baseUrl: string, overrides: Partial<ModelOf<typeof openAiCompatibleDescriptor>> = {}): ModelOf<typeof openAiCompatibleDescriptor> {
  return {
    breaker: NO_BREAKER,
    provider: 'openai-compatible',
    upstream_model: 'fake-upstream-model',
    base_url: baseUrl,
    context_window: 8192,
    max_output_tokens: 1024,
    input_price_per_mtok: 1,
    output_price_per_mtok: 2,
    ...overrides,
  };
}

/** `fake-gpt`, `fake-reasoning` (rejects temperature), `fake-tiny` (64-token window), and the simulator (chat and embeddings). */
export function testCatalog(upstreamUrl: string, backupUrl = upstreamUrl): WrittenCatalog {
  return {
    models: {
      'fake-gpt': upstreamModel(upstreamUrl),
      'fake-backup': upstreamModel(backupUrl, { upstream_model: 'fake-backup-model' }),
      'fake-reasoning': upstreamModel(upstreamUrl, { rejected_params: ['temperature'] }),
      'fake-tiny': upstreamModel(upstreamUrl, { context_window: 64 }),
      sim: {
        provider: 'simulator',
        upstream_model: 'sim-1',
        context_window: 32768,
        max_output_tokens: 4096,
        input_price_per_mtok: 0.1,
        output_price_per_mtok: 0.4,
        simulator: { completion_tokens: 12 },
      },
      'sim-slow': {
        provider: 'simulator',
        upstream_model: 'sim-slow-1',
        context_window: 32768,
        max_output_tokens: 64,
        input_price_per_mtok: 0.1,
        output_price_per_mtok: 0.4,
        simulator: { completion_tokens: 4, latency_ms: 40 },
      },
      'sim-embed': { provider: 'simulator', mode: 'embeddings', upstream_model: 'sim-embed-1', context_window: 8192, input_price_per_mtok: 0.02 },
    },
    tiers: {
      'svc-flash': ['fake-gpt'],
      'svc-standard': ['fake-gpt', 'fake-backup'],
      'svc-pro': ['fake-reasoning', 'fake-gpt'],
    },
  };
}
