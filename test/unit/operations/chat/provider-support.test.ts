import { describe, expect, it } from 'vitest';
import { providerCannotServe } from '../../../../src/operations/chat/provider-support.ts';
import type { ChatCompletionRequest } from '../../../../src/operations/chat/request-schema.ts';
import { anthropicDescriptor } from '../../../../src/providers/anthropic/descriptor.ts';
import { geminiDescriptor } from '../../../../src/providers/gemini/descriptor.ts';
import { openAiCompatibleDescriptor } from '../../../../src/providers/openai-compatible/descriptor.ts';
import { UnsupportedParameterError } from '../../../../src/errors/gateway-error.ts';

function request(fields: Record<string, unknown> = {}, messages: unknown[] = [{ role: 'user', content: 'hi' }]): ChatCompletionRequest {
  return { model: 'm', messages, ...fields } as ChatCompletionRequest;
}

describe('providerCannotServe', () => {
  it('lets an OpenAI-compatible provider take every parameter and content type', () => {
    const body = request({ seed: 1, logprobs: true, logit_bias: { '50256': -100 }, metadata: { a: 'b' } }, [
      { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
    ]);
    expect(providerCannotServe(body, openAiCompatibleDescriptor, 'gpt')).toBeUndefined();
  });

  it('refuses a parameter the descriptor does not list, naming it', () => {
    const error = providerCannotServe(request({ seed: 7 }), anthropicDescriptor, 'claude');
    expect(error).toBeInstanceOf(UnsupportedParameterError);
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'seed' });
    expect(error?.message).toBe("The model 'claude' does not support the parameter 'seed'.");
  });

  it('takes the parameters the descriptor lists, and the door-owned ones', () => {
    const body = request({
      temperature: 0.2,
      top_p: 0.9,
      stop: ['x'],
      user: 'u1',
      tools: [],
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'low',
    });
    expect(providerCannotServe(body, anthropicDescriptor, 'claude')).toBeUndefined();
  });

  it('ignores parameters sent with their neutral values or as null', () => {
    const body = request({ frequency_penalty: 0, presence_penalty: 0, n: 1, logprobs: false, logit_bias: {}, parallel_tool_calls: true, seed: null });
    expect(providerCannotServe(body, anthropicDescriptor, 'claude')).toBeUndefined();
    expect(providerCannotServe(request({ presence_penalty: 0.5 }), anthropicDescriptor, 'claude')?.param).toBe('presence_penalty');
    expect(providerCannotServe(request({ parallel_tool_calls: false }), geminiDescriptor, 'gemini')?.param).toBe('parallel_tool_calls');
  });

  it('refuses a content part type the provider cannot take, naming the part and its type', () => {
    const messages = [
      { role: 'user', content: 'hi' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'listen' },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
        ],
      },
    ];
    const error = providerCannotServe(request({}, messages), anthropicDescriptor, 'claude');
    expect(error).toMatchObject({ param: 'messages[1].content[1]' });
    expect(error?.message).toContain("(content of type 'input_audio')");
    expect(providerCannotServe(request({}, messages), geminiDescriptor, 'gemini')).toBeUndefined();
  });

  it("refuses what the provider's own check finds: Anthropic has no schema-less JSON mode", () => {
    const error = providerCannotServe(request({ response_format: { type: 'json_object' } }), anthropicDescriptor, 'claude');
    expect(error).toMatchObject({ param: 'response_format' });
    expect(error?.message).toContain("'json_object'");
    expect(providerCannotServe(request({ response_format: { type: 'json_object' } }), geminiDescriptor, 'gemini')).toBeUndefined();
  });

  it.each([anthropicDescriptor, geminiDescriptor])('refuses the deprecated function role for %s, which has no call id', (descriptor) => {
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'function', name: 'f', content: '{}' },
    ];
    expect(providerCannotServe(request({}, messages), descriptor, 'x')).toMatchObject({ param: 'messages[1].role' });
  });

  it.each([anthropicDescriptor, geminiDescriptor])('refuses a file part that names an uploaded file instead of carrying it', (descriptor) => {
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'read' },
          { type: 'file', file: { file_id: 'file-abc' } },
        ],
      },
    ];
    expect(providerCannotServe(request({}, messages), descriptor, 'x')).toMatchObject({ param: 'messages[0].content[1].file.file_id' });
    const inline = [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } }] }];
    expect(providerCannotServe(request({}, inline), descriptor, 'x')).toBeUndefined();
  });
});
