import { describe, expect, it } from 'vitest';
import { resolveUsage } from '../../../src/operations/usage.ts';

describe('resolveUsage', () => {
  it("keeps the provider's counts and their details, with the total recomputed", () => {
    const reported = {
      prompt_tokens: 120,
      completion_tokens: 30,
      total_tokens: 999,
      prompt_tokens_details: { cached_tokens: 100, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 12, accepted_prediction_tokens: 0 },
    };
    const { usage, source } = resolveUsage(reported, () => 0, '');
    expect(source).toBe('provider');
    expect(usage).toEqual({ ...reported, total_tokens: 150 });
  });

  it('adds no details the provider did not report', () => {
    const { usage } = resolveUsage({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }, () => 0, '');
    expect(usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });

  it('counts with the tokenizer when the provider reported nothing', () => {
    const { usage, source } = resolveUsage(null, () => 7, 'two words');
    expect(source).toBe('estimated');
    expect(usage).toEqual({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
  });
});
