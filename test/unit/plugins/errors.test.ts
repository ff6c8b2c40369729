/** The web tier's one error mapping, on a tiny real Fastify app driven with `inject`. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { errorsPlugin, rejectOtherMethods } from '../../../src/web/plugins/errors.ts';
import { QueueTimeoutError } from '../../../src/errors/gateway-error.ts';

const BODY_LIMIT = 1024;
const SECRET = 'connection to 10.0.0.7:5432 refused, password=hunter2';

const bodySchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role'],
        properties: { role: { enum: ['system', 'user', 'assistant'] }, content: { type: 'string' } },
      },
    },
    n: { type: 'integer', maximum: 1 },
  },
} as const;

let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    genReqId: () => 'req_test',
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
  });
  await app.register(errorsPlugin, { bodyLimit: BODY_LIMIT });
  app.post('/v1/echo', { schema: { body: bodySchema } }, async (request) => request.body);
  rejectOtherMethods(app, '/v1/echo', ['POST']);
  app.get('/boom', async () => {
    throw new Error(SECRET);
  });
  app.get('/busy', async () => {
    throw new QueueTimeoutError(30_000, 3);
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
});

function post(payload: unknown, contentType = 'application/json') {
  return app.inject({
    method: 'POST',
    url: '/v1/echo',
    headers: { 'content-type': contentType },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
}

describe('errorsPlugin: validation', () => {
  it('passes a valid body through', async () => {
    const response = await post({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('names a nested invalid field as messages[0].role and lists the allowed values', async () => {
    const response = await post({ model: 'm', messages: [{ role: 'robot' }] });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toEqual({
      type: 'invalid_request_error',
      code: 'invalid_value',
      message: "Invalid value for 'messages[0].role': must be one of system, user, assistant.",
      param: 'messages[0].role',
      request_id: 'req_test',
    });
  });

  it('names a deeper index and a missing nested field', async () => {
    const response = await post({ model: 'm', messages: [{ role: 'user' }, { role: 'user' }, { content: 'x' }] });
    expect(response.json().error).toMatchObject({ code: 'missing_required_field', param: 'messages[2].role' });
  });

  it('answers a missing top-level field with missing_required_field', async () => {
    const response = await post({ messages: [{ role: 'user' }] });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({
      type: 'invalid_request_error',
      code: 'missing_required_field',
      param: 'model',
      message: "Missing required parameter: 'model'.",
    });
  });

  it('answers a wrong type with invalid_value on the field', async () => {
    const response = await post({ model: 'm', messages: [{ role: 'user' }], n: 2 });
    expect(response.json().error).toMatchObject({ code: 'invalid_value', param: 'n' });
    expect(response.json().error.message).toMatch(/^Invalid value for 'n' /);
  });

  it('answers a body that is not an object with param null', async () => {
    const response = await post('[1,2]');
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_value', param: null, message: 'The request body must be a JSON object.' });
  });
});

describe('errorsPlugin: body parsing', () => {
  it('answers invalid JSON with invalid_json', async () => {
    const response = await post('{"model": "m", ');
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json', param: null });
  });

  it('answers an empty JSON body with invalid_json', async () => {
    const response = await post('');
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('invalid_json');
  });

  it('answers an oversized body with 413 request_too_large naming the limit', async () => {
    const response = await post({ model: 'x'.repeat(BODY_LIMIT), messages: [] });
    expect(response.statusCode).toBe(413);
    expect(response.json().error).toMatchObject({
      code: 'request_too_large',
      message: `The request body exceeds the limit of ${BODY_LIMIT} bytes.`,
    });
  });

  it('answers a non-JSON content type with 415 naming it', async () => {
    const response = await post('model=m', 'application/x-www-form-urlencoded');
    expect(response.statusCode).toBe(415);
    expect(response.json().error).toMatchObject({ code: 'unsupported_media_type', param: 'Content-Type' });
    expect(response.json().error.message).toContain("'application/x-www-form-urlencoded'");
  });
});

describe('errorsPlugin: routing and handler errors', () => {
  it('answers an unknown route with the 404 envelope', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/nothing?x=1' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.json()).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'not_found',
        message: 'No route for GET /v1/nothing.',
        param: null,
        request_id: 'req_test',
      },
    });
  });

  it('answers another method on a known path with 405 and Allow', async () => {
    const response = await app.inject({ method: 'DELETE', url: '/v1/echo' });
    expect(response.statusCode).toBe(405);
    expect(response.headers['allow']).toBe('POST');
    expect(response.json().error.code).toBe('method_not_allowed');
  });

  it('answers a thrown plain Error with 500 internal_error without leaking its text', async () => {
    const response = await app.inject({ method: 'GET', url: '/boom' });
    expect(response.statusCode).toBe(500);
    expect(response.json().error).toEqual({
      type: 'api_error',
      code: 'internal_error',
      message: 'The gateway failed to process the request.',
      param: null,
      request_id: 'req_test',
    });
    expect(response.body).not.toContain('hunter2');
    expect(response.body).not.toContain('10.0.0.7');
  });

  it('sends a GatewayError as it is, with Retry-After', async () => {
    const response = await app.inject({ method: 'GET', url: '/busy' });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('3');
    expect(response.json().error).toMatchObject({ type: 'api_error', code: 'queue_timeout' });
  });
});
