import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { InvalidValueError } from '../../errors/gateway-error.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body's text goes to a provider, never into the store: it may hold NUL characters. */
    bodyTextToProvider?: boolean;
  }
}

/**
 * How deeply a request body may nest objects and arrays. JSON.parse takes millions of levels, but
 * JSON.stringify (queueing a job, storing a prompt) overflows the stack near ten thousand, and
 * nothing the gateway takes needs more than a few dozen: a tool's parameter schema nests two levels
 * per level of its own.
 */
export const MAX_JSON_DEPTH = 64;

/** What is wrong with a value, and where. */
export interface BoundsProblem {
  path: string;
  problem: 'too_deep' | 'nul';
}

// Paths are kept for the first levels only: they name the field, and a deep one would be long.
const NAMED_LEVELS = 3;

/**
 * The first value nested deeper than `maxDepth`, or (with `noNul`) the first string or key holding a
 * NUL character, which PostgreSQL's text and jsonb refuse. Iterative: the value may be as deep as it likes.
 */
export function boundsProblem(root: unknown, maxDepth: number, noNul: boolean): BoundsProblem | null {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value: root, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop() as { value: unknown; depth: number; path: string };
    if (typeof value === 'string') {
      if (noNul && value.includes('\u0000')) return { path, problem: 'nul' };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= maxDepth) return { path, problem: 'too_deep' };
    const child = (key: string | number) => (depth >= NAMED_LEVELS ? path : typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`);
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, depth: depth + 1, path: child(i) }));
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      if (noNul && key.includes('\u0000')) return { path: child(key), problem: 'nul' };
      stack.push({ value: item, depth: depth + 1, path: child(key) });
    }
  }
  return null;
}

function refuse(found: BoundsProblem, where: string): InvalidValueError {
  const param = found.path === '' ? null : found.path;
  const name = param ?? where;
  if (found.problem === 'too_deep')
    return new InvalidValueError(param, `The value of '${name}' is nested deeper than ${MAX_JSON_DEPTH} levels of objects and arrays.`);
  return new InvalidValueError(param, `'${name}' holds a NUL character (\\u0000), which the gateway does not take here.`);
}

function check(request: FastifyRequest): void {
  const params = boundsProblem(request.params, MAX_JSON_DEPTH, true) ?? boundsProblem(request.query, MAX_JSON_DEPTH, true);
  if (params !== null) throw refuse(params, 'the URL');
  if (request.body === undefined || request.body === null) return;
  const body = boundsProblem(request.body, MAX_JSON_DEPTH, request.routeOptions.config.bodyTextToProvider !== true);
  if (body !== null) throw refuse(body, 'the body');
}

/** Refuses, before validation or any other work, a body nested too deeply and NUL characters in what the store may keep: 400 naming the field. */
export const requestBoundsPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('preValidation', async (request) => check(request));
  },
  { name: 'request-bounds' },
);
