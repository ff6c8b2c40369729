import { describe, expect, it } from 'vitest';
import { chatToolsOf } from '../../../../src/operations/responses/tools.ts';
import { chatToolName } from '../../../../src/operations/responses/namespaced-names.ts';
import { GatewayError } from '../../../../src/errors/gateway-error.ts';

const parameters = { type: 'object', properties: { target: { type: 'string' } }, required: ['target'], additionalProperties: false };
const weather = { type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false };
/** A namespace as Codex sends its sub-agent tools. */
const agents = {
  type: 'namespace',
  name: 'multi_agent_v1',
  description: 'Tools for spawning and managing sub-agents.',
  tools: [
    { type: 'function', name: 'spawn_agent', description: 'Spawn a sub-agent.', strict: false, parameters },
    { type: 'function', name: 'close_agent', parameters },
  ],
};

const tools = (request: Record<string, unknown>) => chatToolsOf({ model: 'm', input: 'Hi', ...request });

function refusal(request: Record<string, unknown>): GatewayError {
  try {
    tools(request);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected the request to be refused');
}

describe('chatToolsOf: namespace tools', () => {
  it('makes each function of a namespace a function tool named <namespace>__<name>, in order', () => {
    expect(tools({ tools: [weather, agents] })).toEqual({
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, strict: false } },
        { type: 'function', function: { name: 'multi_agent_v1__spawn_agent', description: 'Spawn a sub-agent.', parameters, strict: false } },
        { type: 'function', function: { name: 'multi_agent_v1__close_agent', parameters } },
      ],
      dropped: [],
    });
  });

  it('keeps a name of 64 characters whole, and cuts a longer one to 55 and a hash of the whole, within every provider limit', () => {
    const namespace = 'n'.repeat(30);
    expect(chatToolName(namespace, 'f'.repeat(32))).toBe(`${namespace}__${'f'.repeat(32)}`);
    const long = chatToolName(namespace, `${'f'.repeat(40)}_one`);
    const other = chatToolName(namespace, `${'f'.repeat(40)}_two`);
    expect(long).toMatch(/^n{30}__f{23}_[0-9a-f]{8}$/);
    expect(long).toHaveLength(64);
    expect(other).not.toBe(long);
  });

  it('refuses a tool of a namespace that is not a function, naming it', () => {
    const grouped = { ...agents, tools: [...agents.tools, { type: 'custom', name: 'patch' }] };
    expect(refusal({ tools: [grouped] })).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'tools[0].tools[2]' });
  });

  it('refuses two tools the upstream would know by one name, naming the second', () => {
    const error = refusal({ tools: [{ type: 'function', name: 'multi_agent_v1__close_agent' }, agents] });
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'tools[1].tools[1].name' });
    expect(error.message).toContain("'multi_agent_v1__close_agent'");
  });
});

describe('chatToolsOf: hosted tools', () => {
  it.each([
    [{ type: 'web_search', external_web_access: false }],
    [{ type: 'web_search_2025_08_26' }],
    [{ type: 'web_search_preview' }],
    [{ type: 'web_search_preview_2025_03_11' }],
    [{ type: 'file_search', vector_store_ids: ['vs_1'] }],
    [{ type: 'code_interpreter', container: { type: 'auto' } }],
    [{ type: 'image_generation' }],
    [{ type: 'mcp', server_label: 'x', server_url: 'https://x' }],
  ])('drops a %o tool, which no provider runs, and names it', (tool) => {
    expect(tools({ tools: [weather, tool], tool_choice: 'auto' })).toEqual({
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, strict: false } }],
      tool_choice: 'auto',
      dropped: [tool.type],
    });
  });

  it('names each dropped type once, in the order of the tools', () => {
    const dropped = tools({ tools: [{ type: 'mcp', server_label: 'a' }, { type: 'web_search' }, { type: 'mcp', server_label: 'b' }] }).dropped;
    expect(dropped).toEqual(['mcp', 'web_search']);
  });

  it.each([['auto'], ['none']] as const)('sends no tools and no tool_choice %s when only hosted tools were asked for', (choice) => {
    expect(tools({ tools: [{ type: 'web_search' }], tool_choice: choice })).toEqual({ dropped: ['web_search'] });
  });

  it('refuses tool_choice required when only hosted tools were asked for', () => {
    const error = refusal({ tools: [{ type: 'web_search' }], tool_choice: 'required' });
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'tool_choice' });
    expect(error.message).toContain('web_search');
  });

  it.each([
    [{ type: 'web_search' }],
    [{ type: 'web_search_preview' }],
    [{ type: 'file_search' }],
    [{ type: 'code_interpreter' }],
    [{ type: 'image_generation' }],
    [{ type: 'mcp', server_label: 'x' }],
  ])('refuses a tool_choice that requires the hosted tool %o, naming tool_choice', (choice) => {
    const error = refusal({ tools: [weather, { type: choice.type }], tool_choice: choice });
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'tool_choice' });
    expect(error.message).toContain(`'${choice.type}'`);
  });

  it.each([
    [{ type: 'computer_use_preview', display_height: 1, display_width: 1, environment: 'browser' }],
    [{ type: 'custom', name: 'grammar_tool' }],
    [{ type: 'local_shell' }],
    [{ type: 'apply_patch' }],
  ])('keeps refusing %o, a tool the client runs, naming its index', (tool) => {
    const error = refusal({ tools: [weather, tool] });
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'tools[1]' });
    expect(error.message).toContain(`tools of type '${tool.type}'`);
  });
});
