/**
 * JSON Schema (as OpenAI tools carry it) → the OpenAPI-subset Schema that Gemini's function
 * `parameters` accept (https://ai.google.dev/api/caching#Schema). Gemini rejects a request whose
 * schema holds a keyword it does not know, so everything outside the subset is translated or removed.
 */
import type { GeminiSchema } from './wire.ts';

/** Keywords copied as they are (`format` and `enum` with the restrictions below). */
export const KEPT_KEYWORDS = [
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'items',
  'properties',
  'required',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'minProperties',
  'maxProperties',
  'propertyOrdering',
  'anyOf',
  'default',
  'example',
] as const;

/** Keywords rewritten into the subset, with what each becomes. */
export const TRANSLATED_KEYWORDS = {
  type: "a list: `'null'` in it becomes `nullable: true`; one other type stays `type`, several become `anyOf` of `{type}` each",
  const: '`enum: [value]`',
  oneOf: '`anyOf`',
  examples: '`example`: the first one',
  $ref: 'the definition it points to (`#/$defs/…`, `#/definitions/…`, `#`), inlined; past 8 nested references, `{type: "object"}`',
  allOf: 'merged into the schema: `properties` joined, `required` united, other keywords filled in',
} as const;

/** Keywords dropped because Gemini's Schema has no such field (any other unknown keyword is dropped too). */
export const REMOVED_KEYWORDS = [
  '$schema',
  '$id',
  '$anchor',
  '$defs',
  'definitions',
  '$comment',
  '$dynamicRef',
  '$dynamicAnchor',
  '$vocabulary',
  'additionalProperties',
  'patternProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'prefixItems',
  'additionalItems',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
  'deprecated',
  'readOnly',
  'writeOnly',
  'strict',
] as const;

/** References followed inside one another before the rest is cut to `{type: 'object'}` (recursive schemas). */
export const MAX_REF_DEPTH = 8;

/** The formats Gemini accepts, by type; any other format is dropped. */
export const FORMATS_BY_TYPE: Readonly<Record<string, readonly string[]>> = {
  string: ['enum', 'date-time'],
  integer: ['int32', 'int64'],
  number: ['float', 'double'],
};

const COPIED = new Set<string>([
  'title',
  'description',
  'pattern',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minProperties',
  'maxProperties',
  'propertyOrdering',
  'default',
  'example',
]);

type Json = Record<string, unknown>;

interface Context {
  /** The schema `$ref`s point into. */
  root: Json;
  /** References followed to reach the schema being translated. */
  refDepth: number;
}

/** Translates a JSON Schema into Gemini's Schema subset. */
export function toGeminiSchema(schema: Json): GeminiSchema {
  return convert(schema, { root: schema, refDepth: 0 }, false);
}

// `partial`: the schema is an allOf member, whose `required` may name properties another member declares.
function convert(node: unknown, ctx: Context, partial: boolean): GeminiSchema {
  if (!isJson(node)) return {};
  if (typeof node.$ref === 'string') return convertRef(node, node.$ref, ctx, partial);
  const out: GeminiSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (COPIED.has(key)) out[key] = value;
    else if (key === 'nullable' && typeof value === 'boolean') out.nullable = value;
    else if (key === 'items' && isJson(value)) out.items = convert(value, ctx, false);
    else if (key === 'properties' && isJson(value)) out.properties = convertProperties(value, ctx);
    else if (key === 'required' && Array.isArray(value)) out.required = value.filter((name) => typeof name === 'string');
    else if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(value))
      out.anyOf = [...((out.anyOf as GeminiSchema[] | undefined) ?? []), ...value.map((member) => convert(member, ctx, false))];
  }
  if (out.example === undefined && Array.isArray(node.examples) && node.examples.length > 0) out.example = node.examples[0];
  applyType(out, node.type);
  const values = Array.isArray(node.enum) ? node.enum : 'const' in node ? [node.const] : null;
  if (values !== null) applyEnum(out, values);
  if (Array.isArray(node.allOf))
    mergeAllOf(
      out,
      node.allOf.map((member) => convert(member, ctx, true)),
    );
  return finish(out, node.format, partial);
}

function convertProperties(properties: Json, ctx: Context): GeminiSchema {
  return Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, convert(schema, ctx, false)]));
}

// The target, with the keywords written beside `$ref` (a description, say) taking precedence.
function convertRef(node: Json, ref: string, ctx: Context, partial: boolean): GeminiSchema {
  const target = ctx.refDepth < MAX_REF_DEPTH ? resolvePointer(ctx.root, ref) : undefined;
  if (!isJson(target)) return { type: 'object' };
  const { $ref: _ref, ...siblings } = node;
  return convert({ ...target, ...siblings }, { root: ctx.root, refDepth: ctx.refDepth + 1 }, partial);
}

// A local JSON pointer (RFC 6901 in a URI fragment); other references are not followed.
function resolvePointer(root: Json, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let current: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const token = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    current = isJson(current) ? current[token] : Array.isArray(current) ? current[Number(token)] : undefined;
  }
  return current;
}

function applyType(out: GeminiSchema, type: unknown): void {
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type.filter((t): t is string => typeof t === 'string') : [];
  const nonNull = types.filter((t) => t !== 'null');
  if (types.includes('null')) out.nullable = true;
  if (nonNull.length === 1) out.type = nonNull[0];
  // The schema's own anyOf already carries its alternatives' types.
  else if (nonNull.length > 1 && out.anyOf === undefined) out.anyOf = nonNull.map((t) => ({ type: t }));
}

// Gemini's enum holds strings only: other values become their JSON text, and the type a string.
function applyEnum(out: GeminiSchema, values: unknown[]): void {
  if (values.includes(null)) out.nullable = true;
  const nonNull = values.filter((value) => value !== null);
  if (nonNull.every((value) => typeof value === 'string')) {
    out.enum = nonNull;
    // Gemini takes an enum on a string schema only.
    if (out.type === undefined && out.anyOf === undefined) out.type = 'string';
    return;
  }
  out.enum = [...new Set(nonNull.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))))];
  out.type = 'string';
  if (Array.isArray(out.anyOf) && (out.anyOf as GeminiSchema[]).every((member) => Object.keys(member).length === 1 && 'type' in member)) delete out.anyOf;
}

function mergeAllOf(out: GeminiSchema, members: GeminiSchema[]): void {
  for (const member of members) {
    for (const [key, value] of Object.entries(member)) {
      if (key === 'properties' && isJson(value)) out.properties = { ...value, ...(isJson(out.properties) ? out.properties : {}) };
      else if (key === 'required' && Array.isArray(value))
        out.required = [...new Set([...((out.required as string[] | undefined) ?? []), ...(value as string[])])];
      else if (!(key in out)) out[key] = value;
    }
  }
  if (out.properties !== undefined && out.type === undefined) out.type = 'object';
}

function finish(out: GeminiSchema, format: unknown, partial: boolean): GeminiSchema {
  if (typeof format === 'string' && typeof out.type === 'string' && FORMATS_BY_TYPE[out.type]?.includes(format) === true) out.format = format;
  if (!partial && out.required !== undefined) {
    // Gemini refuses a required name that `properties` does not declare.
    const declared = isJson(out.properties) ? out.properties : {};
    const required = (out.required as string[]).filter((name) => Object.hasOwn(declared, name));
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  // Gemini refuses `properties: {}` ("should be non-empty for OBJECT type").
  if (isJson(out.properties) && Object.keys(out.properties).length === 0) delete out.properties;
  return out;
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
