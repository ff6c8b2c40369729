/**
 * The request schema at a door: a tiny Fastify app with the web tier's Ajv options and error
 * mapping, so that a bad item is answered with the error that names its field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { errorsPlugin } from '../../../../src/web/plugins/errors.ts';
import { ResponsesRequestSchema } from '../../../../src/wire/openai-responses.ts';

const BODY_LIMIT = 1024 * 1024;
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify({
    logger: false,
    genReqId: () => 'req_test',
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
  });
  await app.register(errorsPlugin, { bodyLimit: BODY_LIMIT });
  app.post('/v1/responses', { schema: { body: ResponsesRequestSchema } }, async () => ({ ok: true }));
  await app.ready();
});

afterAll(async () => {
  await app?.close();
});

async function post(body: Record<string, unknown>) {
  const response = await app.inject({ method: 'POST', url: '/v1/responses', payload: { model: 'svc-standard', ...body } });
  return {
    status: response.statusCode,
    error: response.statusCode === 200 ? null : (response.json().error as { code: string; param: string | null; message: string }),
  };
}

describe('ResponsesRequestSchema at the door', () => {
  it('admits a request with every kind of served item, and fields it does not name', async () => {
    const response = await post({
      input: [
        { role: 'user', content: 'Hi' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAA' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'ok' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done', annotations: [] }] },
        { type: 'function_call', call_id: 'c2', name: 'close_agent', namespace: 'multi_agent_v1', arguments: '{}' },
      ],
      tools: [
        {
          type: 'namespace',
          name: 'multi_agent_v1',
          description: 'Sub-agents.',
          tools: [{ type: 'function', name: 'close_agent', parameters: { type: 'object' } }],
        },
        { type: 'web_search', external_web_access: false },
      ],
      context_management: [{ type: 'compaction' }],
    });
    expect(response).toEqual({ status: 200, error: null });
  });

  it.each([
    ['model missing', { model: undefined, input: 'Hi' }, 'missing_required_field', 'model'],
    [
      'a function_call without call_id',
      {
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'function_call', name: 'f', arguments: '{}' },
        ],
      },
      'missing_required_field',
      'input[1].call_id',
    ],
    ['a function_call_output without output', { input: [{ type: 'function_call_output', call_id: 'c1' }] }, 'missing_required_field', 'input[0].output'],
    ['a message of an unknown role', { input: [{ role: 'tool', content: 'x' }] }, 'invalid_value', 'input[0].role'],
    ['an untyped item without role', { input: [{ content: 'x' }] }, 'missing_required_field', 'input[0].role'],
    ['a typed message without content', { input: [{ type: 'message', role: 'user' }] }, 'missing_required_field', 'input[0].content'],
    ['an input_text part without text', { input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'missing_required_field', 'input[0].content[0].text'],
    ['a part without type', { input: [{ role: 'user', content: [{ text: 'x' }] }] }, 'missing_required_field', 'input[0].content[0].type'],
    ['a reasoning item without summary', { input: [{ type: 'reasoning', id: 'rs_1' }] }, 'missing_required_field', 'input[0].summary'],
    ['a function tool without name', { input: 'Hi', tools: [{ type: 'function', parameters: {} }] }, 'missing_required_field', 'tools[0].name'],
    [
      'a namespace tool without its tools',
      { input: 'Hi', tools: [{ type: 'namespace', name: 'ns', description: 'x' }] },
      'missing_required_field',
      'tools[0].tools',
    ],
    [
      'a tool of a namespace without name',
      { input: 'Hi', tools: [{ type: 'namespace', name: 'ns', description: 'x', tools: [{ type: 'function' }] }] },
      'missing_required_field',
      'tools[0].tools[0].name',
    ],
    ['a function tool_choice without name', { input: 'Hi', tool_choice: { type: 'function' } }, 'missing_required_field', 'tool_choice.name'],
    [
      'a json_schema format without schema',
      { input: 'Hi', text: { format: { type: 'json_schema', name: 'a' } } },
      'missing_required_field',
      'text.format.schema',
    ],
    ['an unknown reasoning effort', { input: 'Hi', reasoning: { effort: 'extreme' } }, 'invalid_value', 'reasoning.effort'],
    ['a temperature above 2', { input: 'Hi', temperature: 3 }, 'invalid_value', 'temperature'],
    ['a max_output_tokens of 0', { input: 'Hi', max_output_tokens: 0 }, 'invalid_value', 'max_output_tokens'],
  ])('answers %s with the error naming it', async (_what, body, code, param) => {
    const { status, error } = await post(body);
    expect(status).toBe(400);
    expect(error).toMatchObject({ code, param });
  });

  it('lists what tool_choice may be', async () => {
    const { error } = await post({ input: 'Hi', tool_choice: 'sometimes' });
    expect(error).toMatchObject({
      code: 'invalid_value',
      param: 'tool_choice',
      message: "Invalid value for 'tool_choice': must be one of an object, none, auto, required.",
    });
  });
});
