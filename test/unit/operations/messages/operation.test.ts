/** The Messages operation's plan: which candidates serve a request, and the prompt tokens it carries to the worker. */
import { describe, expect, it } from 'vitest';
import { messagesWeb } from '../../../../src/operations/messages/operation.ts';
import { countPromptTokens } from '../../../../src/operations/messages/prompt-text.ts';
import type { CatalogFile } from '../../../../src/domain/catalog/schema.ts';
import type { PlanContext } from '../../../../src/operations/web-operation.ts';
import type { PromptCache } from '../../../../src/domain/prompts/prompt-cache.ts';
import type { MessagesRequest } from '../../../../src/wire/anthropic-messages.ts';

const prices = { input_price_per_mtok: 1, output_price_per_mtok: 1, max_output_tokens: 1024 };
const catalog: CatalogFile = {
  models: {
    claude: { provider: 'anthropic', upstream_model: 'claude-test', api_key_env: 'ANTHROPIC_API_KEY', context_window: 200_000, ...prices },
    gpt: { provider: 'openai-compatible', upstream_model: 'gpt-test', base_url: 'http://127.0.0.1:1', context_window: 100_000, ...prices },
    tiny: { provider: 'openai-compatible', upstream_model: 'tiny-test', base_url: 'http://127.0.0.1:1', context_window: 300, ...prices },
  },
  tiers: { 'svc-standard': ['gpt', 'claude'], 'svc-pro': ['claude'], 'svc-flash': ['tiny'] },
  pools: {},
};
// The Messages plan reads no kept responses and no tenant settings.
const context = { catalog, prompts: {} as PromptCache, tenantId: 'acme', requestId: 'req_1', headers: {} } as unknown as PlanContext;

const request = {
  model: 'gpt',
  max_tokens: 100,
  system: 'You are a weather bot.',
  tools: [{ name: 'get_weather', description: 'The weather in a city.', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C and sunny' }] },
  ],
} as MessagesRequest;

const plan = async (fields: Partial<MessagesRequest>) => messagesWeb.plan({ ...request, ...fields }, context);

describe('messagesWeb.plan: prompt tokens', () => {
  // message_start goes out before a chat upstream says anything of its counts; Claude Code shows context use from it.
  it.each(['gpt', 'svc-standard'])('%s, streamed: a chat candidate may answer, so the prompt is counted as count_tokens counts it', async (model) => {
    expect((await plan({ model, stream: true })).promptTokens).toBe(countPromptTokens(request));
  });

  it.each([
    ['claude', true],
    ['gpt', false],
    ['svc-standard', undefined],
  ])('%s, stream %s: nothing needs the count while every window fits the byte bound', async (model, stream) => {
    expect((await plan({ model, stream })).promptTokens).toBeUndefined();
  });

  it("a chat candidate's window is checked against the same count", async () => {
    const refused = plan({ model: 'svc-flash', stream: true, max_tokens: 290 });
    await expect(refused).rejects.toMatchObject({ status: 422, code: 'context_length_exceeded' });
    await expect(refused).rejects.toThrow(`The prompt (${countPromptTokens(request)} tokens)`);
  });
});
