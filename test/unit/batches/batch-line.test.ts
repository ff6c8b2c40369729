import { describe, expect, it } from 'vitest';
import { parseBatchLine } from '../../../src/domain/batches/batch-line.ts';
import { readMetadata } from '../../../src/domain/batches/batch-metadata.ts';

const accept = () => null;
const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ custom_id: 'c1', method: 'POST', url: '/v1/chat/completions', body: { model: 'm' }, ...fields });

describe('parseBatchLine', () => {
  it('reads a line of the batch endpoint', () => {
    expect(parseBatchLine(line({}), 1, '/v1/chat/completions', accept)).toEqual({ customId: 'c1', body: { model: 'm' } });
  });

  it.each([
    ['{"custom_id":', 'invalid_json_line', null],
    ['[1]', 'invalid_json_line', null],
    [line({ custom_id: '' }), 'missing_required_parameter', 'custom_id'],
    [line({ method: 'GET' }), 'invalid_value', 'method'],
    [line({ url: '/v1/embeddings' }), 'invalid_url', 'url'],
    [line({ body: 'x' }), 'missing_required_parameter', 'body'],
    [line({ body: { model: 'm', stream: true } }), 'invalid_value', 'body.stream'],
  ])('refuses %s with %s', (text, code, param) => {
    expect(parseBatchLine(text, 7, '/v1/chat/completions', accept)).toMatchObject({ code, param, line: 7 });
  });

  it("passes the body check's finding on, naming the line", () => {
    const check = () => ({ code: 'model_not_found', message: 'no such model', param: 'body.model' });
    expect(parseBatchLine(line({}), 3, '/v1/chat/completions', check)).toEqual({
      code: 'model_not_found',
      message: 'Line 3: no such model',
      param: 'body.model',
      line: 3,
    });
  });
});

describe('readMetadata', () => {
  it("keeps OpenAI's bounds", () => {
    expect(readMetadata(undefined)).toBeNull();
    expect(readMetadata({ a: 'b' })).toEqual({ a: 'b' });
    expect(() => readMetadata({ a: 1 })).toThrow(/must be a string/);
    expect(() => readMetadata(Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])))).toThrow(/at most 16/);
    expect(() => readMetadata({ ['k'.repeat(65)]: 'v' })).toThrow(/at most 64/);
    expect(() => readMetadata({ k: 'v'.repeat(513) })).toThrow(/at most 512/);
  });
});
