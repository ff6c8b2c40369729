import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import pkg from '../../../package.json' with { type: 'json' };
import { AnthropicErrorEnvelopeSchema, ErrorEnvelopeSchema } from '../../errors/to-envelope.ts';
import type { Credentials, RouteDocs } from '../../wire/route-doc.ts';
import type { Operations } from '../../operations/operation.ts';
import { healthDocs } from '../routes/health.ts';
import { modelDocs } from '../routes/v1/models.ts';
import { promptDocs } from '../routes/v1/prompts.ts';
import { usageDocs } from '../routes/v1/usage.ts';
import { responseDocs } from '../routes/v1/responses.ts';
import { batchDocs } from '../routes/v1/batches.ts';
import { fileDocs } from '../routes/v1/files.ts';
import { messageBatchDocs } from '../routes/v1/message-batches.ts';
import { budgetDocs } from '../routes/v1/budgets.ts';
import { auditDocs } from '../routes/v1/audit.ts';

/** The docs of each operation's routes, its side routes' included. */
function operationDocs(operations: Operations): RouteDocs {
  const routes = operations.flatMap((operation) => [operation, ...(operation.sideRoutes ?? [])]);
  return Object.fromEntries(routes.map((route) => [`${route.method} ${route.path}`, route.doc]));
}

/**
 * The public contract, route by route. A route without an entry (the internal surface, the 405
 * answers, this plugin's own pages) is left out of the document.
 */
function publicRoutes(operations: Operations): RouteDocs {
  return {
    ...healthDocs,
    ...operationDocs(operations),
    ...responseDocs,
    ...fileDocs,
    ...batchDocs,
    ...messageBatchDocs,
    ...modelDocs,
    ...promptDocs,
    ...usageDocs,
    ...budgetDocs,
    ...auditDocs,
  };
}

const SECURITY: Record<Credentials, Array<Record<string, string[]>>> = {
  none: [],
  bearer: [{ bearer: [] }],
  'bearer-or-x-api-key': [{ bearer: [] }, { apiKey: [] }],
};

const DESCRIPTION = `OpenAI-compatible gateway for chat completions, embeddings, Anthropic's Messages API and
OpenAI's Responses API, with named prompts, usage records, budgets and an audit log.

Every request carries \`Authorization: Bearer <API key or JWT>\` (also \`x-api-key\` on \`/v1/messages\`).
Every answer carries its request id in \`x-request-id\`. Every non-2xx answer is the error envelope
(\`ErrorEnvelope\`; Anthropic's shape, \`AnthropicErrorEnvelope\`, on \`/v1/messages\`). Before a request reaches
a route, any path may also be answered 400 \`malformed_request\`, 404 \`not_found\`, 405 \`method_not_allowed\`,
408 \`request_timeout\`, 414 \`uri_too_long\` or 431 \`headers_too_large\`, with the envelope.`;

/** Merges a route's doc into the schema @fastify/swagger reads (body, querystring and params stay Fastify's own); undocumented routes are hidden. */
function documented(
  docs: RouteDocs,
  { schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions },
): { schema: FastifySchema; url: string } {
  const doc = typeof route.method === 'string' ? docs[`${route.method} ${url}`] : undefined;
  if (!doc) return { schema: { hide: true }, url };
  return {
    url: doc.path ?? url,
    schema: {
      ...schema,
      operationId: doc.operationId,
      summary: doc.summary,
      ...(doc.description === undefined ? {} : { description: doc.description }),
      tags: doc.tags,
      security: SECURITY[doc.credentials],
      ...(doc.params ? { params: doc.params } : {}),
      ...(doc.headers ? { headers: doc.headers } : {}),
      response: doc.responses,
    },
  };
}

/**
 * The OpenAPI 3.1 document of the public routes at GET /openapi.json, and its reference page at
 * /docs. Both need no credential: they describe only the public contract, `operations`' routes
 * among it. Registered before the routes, whose registration @fastify/swagger records.
 */
export const openapiPlugin = fp(
  async (app: FastifyInstance, options: { operations: Operations }) => {
    const docs = publicRoutes(options.operations);
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'LLM gateway', version: pkg.version, description: DESCRIPTION },
        components: {
          schemas: { ErrorEnvelope: ErrorEnvelopeSchema, AnthropicErrorEnvelope: AnthropicErrorEnvelopeSchema },
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer', description: 'An API key (`gwk_…`) or a JWT of the configured identity provider.' },
            apiKey: {
              type: 'apiKey',
              in: 'header',
              name: 'x-api-key',
              description: "The API key as Anthropic's SDK sends it (`/v1/messages` and `/v1/messages/batches` only).",
            },
          },
        },
      },
      transform: (route) => documented(docs, route),
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
    app.get('/openapi.json', async () => app.swagger());
  },
  { name: 'openapi' },
);
