import { describe, it, expect } from 'vitest';
import { KEPT_KEYWORDS, MAX_REF_DEPTH, REMOVED_KEYWORDS, TRANSLATED_KEYWORDS, toGeminiSchema } from '../../../../src/providers/gemini/schema.ts';

type Schema = Record<string, unknown>;

/** The schema of `name` inside an object schema's properties. */
function property(schema: Schema, name: string): Schema {
  return (schema.properties as Record<string, Schema>)[name] as Schema;
}

describe('toGeminiSchema: kept keywords', () => {
  it('copies the subset as it is', () => {
    const schema = {
      type: 'array',
      title: 'Scores',
      description: 'Some scores.',
      nullable: false,
      minItems: 1,
      maxItems: 5,
      default: [1],
      example: [2, 3],
      items: { type: 'number', minimum: 0, maximum: 10, format: 'double' },
    };
    expect(toGeminiSchema(schema)).toEqual(schema);
    const object = {
      type: 'object',
      minProperties: 1,
      maxProperties: 3,
      propertyOrdering: ['b', 'a'],
      properties: { a: { type: 'string', minLength: 2, maxLength: 4, pattern: '^[a-z]+$' }, b: { type: 'boolean' } },
      required: ['a'],
    };
    expect(toGeminiSchema(object)).toEqual(object);
  });

  it.each([
    ['string', 'enum', true],
    ['string', 'date-time', true],
    ['string', 'email', false],
    ['string', 'uri', false],
    ['integer', 'int32', true],
    ['integer', 'int64', true],
    ['integer', 'uint8', false],
    ['number', 'float', true],
    ['number', 'double', true],
    ['number', 'int32', false],
    ['boolean', 'int32', false],
  ])('%s with format %s: kept %s', (type, format, kept) => {
    expect(toGeminiSchema({ type, format })).toEqual(kept ? { type, format } : { type });
  });

  it('lists what it keeps, translates and removes without overlap', () => {
    const translated = Object.keys(TRANSLATED_KEYWORDS).filter((keyword) => keyword !== 'type');
    const all = [...KEPT_KEYWORDS, ...translated, ...REMOVED_KEYWORDS];
    expect(new Set(all).size).toBe(all.length);
  });
});

describe('toGeminiSchema: translated keywords', () => {
  it("turns ['T', 'null'] into T with nullable", () => {
    expect(toGeminiSchema({ type: ['integer', 'null'], minimum: 1 })).toEqual({ type: 'integer', nullable: true, minimum: 1 });
    expect(toGeminiSchema({ type: 'null' })).toEqual({ nullable: true });
  });

  it('turns several non-null types into anyOf, keeping nullable', () => {
    expect(toGeminiSchema({ type: ['string', 'number', 'null'], description: 'd' })).toEqual({
      description: 'd',
      nullable: true,
      anyOf: [{ type: 'string' }, { type: 'number' }],
    });
  });

  it('turns const into a one-value enum, stringified when not a string', () => {
    expect(toGeminiSchema({ const: 'on' })).toEqual({ type: 'string', enum: ['on'] });
    expect(toGeminiSchema({ type: 'integer', const: 5 })).toEqual({ type: 'string', enum: ['5'] });
    expect(toGeminiSchema({ type: 'boolean', const: true })).toEqual({ type: 'string', enum: ['true'] });
  });

  it('stringifies a non-string enum and makes the schema a string; a null member makes it nullable', () => {
    expect(toGeminiSchema({ type: ['integer', 'string'], enum: [1, '1', 2] })).toEqual({ type: 'string', enum: ['1', '2'] });
    expect(toGeminiSchema({ type: ['string', 'null'], enum: ['a', 'b', null] })).toEqual({ type: 'string', nullable: true, enum: ['a', 'b'] });
  });

  it('turns oneOf into anyOf, and joins it with an anyOf', () => {
    expect(toGeminiSchema({ oneOf: [{ type: 'string' }, { type: 'integer', exclusiveMinimum: 0 }] })).toEqual({
      anyOf: [{ type: 'string' }, { type: 'integer' }],
    });
    expect(toGeminiSchema({ anyOf: [{ type: 'string' }], oneOf: [{ type: 'boolean' }] })).toEqual({ anyOf: [{ type: 'string' }, { type: 'boolean' }] });
  });

  it('keeps the first of examples as example, unless example is given', () => {
    expect(toGeminiSchema({ type: 'string', examples: ['a', 'b'] })).toEqual({ type: 'string', example: 'a' });
    expect(toGeminiSchema({ type: 'string', example: 'z', examples: ['a'] })).toEqual({ type: 'string', example: 'z' });
    expect(toGeminiSchema({ type: 'string', examples: [] })).toEqual({ type: 'string' });
  });

  it('inlines $ref to $defs and definitions, with the keywords beside $ref winning', () => {
    const schema = {
      type: 'object',
      definitions: { Id: { type: 'string', description: 'An id.', pattern: '^[0-9]+$' } },
      $defs: { 'a/b': { type: 'integer' } },
      properties: { id: { $ref: '#/definitions/Id', description: 'The order id.' }, n: { $ref: '#/$defs/a~1b' } },
    };
    expect(toGeminiSchema(schema)).toEqual({
      type: 'object',
      properties: { id: { type: 'string', description: 'The order id.', pattern: '^[0-9]+$' }, n: { type: 'integer' } },
    });
  });

  it(`cuts recursive references after ${MAX_REF_DEPTH} levels to {type: 'object'}`, () => {
    const list = { type: 'object', properties: { value: { type: 'string' }, next: { $ref: '#' } } };
    let node: Schema = toGeminiSchema(list);
    for (let level = 0; level < MAX_REF_DEPTH; level += 1) {
      expect(property(node, 'value')).toEqual({ type: 'string' });
      node = property(node, 'next');
    }
    expect(property(node, 'value')).toEqual({ type: 'string' });
    expect(property(node, 'next')).toEqual({ type: 'object' });
  });

  it("makes an unresolvable $ref {type: 'object'}", () => {
    expect(toGeminiSchema({ type: 'object', properties: { a: { $ref: 'https://x.test/schema.json' }, b: { $ref: '#/$defs/Missing' } } })).toEqual({
      type: 'object',
      properties: { a: { type: 'object' }, b: { type: 'object' } },
    });
  });

  it('merges allOf members: properties joined, required united (also from a member without properties)', () => {
    const schema = {
      $defs: { Base: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
      description: 'A pet.',
      allOf: [{ $ref: '#/$defs/Base' }, { properties: { name: { type: 'string' } } }, { required: ['name'] }, { description: 'ignored: the schema has one' }],
    };
    expect(toGeminiSchema(schema)).toEqual({
      type: 'object',
      description: 'A pet.',
      properties: { id: { type: 'string' }, name: { type: 'string' } },
      required: ['id', 'name'],
    });
  });
});

describe('toGeminiSchema: removed keywords', () => {
  it.each(REMOVED_KEYWORDS)('drops %s', (keyword) => {
    expect(toGeminiSchema({ type: 'string', description: 'd', [keyword]: keyword === 'additionalProperties' ? false : { type: 'string' } })).toEqual({
      type: 'string',
      description: 'd',
    });
  });

  it('drops keywords it does not know, and the tuple form of items', () => {
    expect(toGeminiSchema({ type: 'array', items: [{ type: 'string' }], 'x-internal': true, discriminator: { propertyName: 'kind' } })).toEqual({
      type: 'array',
    });
  });

  it('drops required names that no property declares, and an empty properties object', () => {
    expect(toGeminiSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'b'] })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
    expect(toGeminiSchema({ type: 'object', properties: {}, required: ['a'] })).toEqual({ type: 'object' });
    expect(toGeminiSchema({ type: 'object', required: ['toString'] })).toEqual({ type: 'object' });
  });

  it('translates schemas nested in properties, items and anyOf', () => {
    const schema = { type: 'object', properties: { list: { type: 'array', items: { anyOf: [{ const: 1 }, { type: ['string', 'null'], $comment: 'x' }] } } } };
    expect(toGeminiSchema(schema)).toEqual({
      type: 'object',
      properties: {
        list: {
          type: 'array',
          items: {
            anyOf: [
              { type: 'string', enum: ['1'] },
              { type: 'string', nullable: true },
            ],
          },
        },
      },
    });
  });
});
