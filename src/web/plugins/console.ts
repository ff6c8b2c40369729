import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fileURLToPath } from 'node:url';
import { RouteNotFoundError, ServiceUnavailableError } from '../../errors/gateway-error.ts';
import { ASSETS_FOLDER, INDEX_FILE, readBuiltConsole, type BuiltFile } from '../console/built-files.ts';
import { chooseEncoding } from '../console/content-encoding.ts';
import { rejectOtherMethods } from './errors.ts';

/** Where the console is served. */
export const CONSOLE_PREFIX = '/console';

/** Where `npm run build:console` writes the console: dist/console of the package. */
export const BUILT_CONSOLE_DIR = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

// The console's scripts and styles are its own files; it calls only this origin's API and is never framed.
const CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";

// A path segment that would step out of, or stay on, its folder: refused, whatever the map holds.
const DOT_SEGMENT = /^\.{1,2}$/;

function send(request: FastifyRequest, reply: FastifyReply, file: BuiltFile): FastifyReply {
  const encoding = chooseEncoding(request.headers['accept-encoding'], file.encoded);
  if (encoding) reply.header('content-encoding', encoding);
  return reply
    .header('content-type', file.contentType)
    .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
    .header('vary', 'accept-encoding')
    .send(encoding ? file.encoded[encoding] : file.body);
}

/**
 * The web console: the static files of its build, without credentials (the pages sign in against the
 * API, which checks every call). A path that is no file of the build is a client route of the
 * single-page app and gets index.html, except under assets/ (a missing script is a 404, not a page).
 * Until the console is built the folder is looked at again on each request, so a build made after
 * boot is served without a restart; once found, it is kept. Register with `prefix: CONSOLE_PREFIX`.
 */
export async function consolePlugin(app: FastifyInstance, options: { dir: string }): Promise<void> {
  let built = await readBuiltConsole(options.dir);
  const files = async () => {
    built ??= await readBuiltConsole(options.dir);
    if (!built) throw new ServiceUnavailableError('The console is not built: run `npm run build:console`.', null);
    return built;
  };
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY).header('x-content-type-options', 'nosniff');
  });
  app.get('/', async (request, reply) => send(request, reply, (await files()).get(INDEX_FILE) as BuiltFile));
  app.get<{ Params: { '*': string } }>('/*', async (request, reply) => {
    const path = request.params['*'];
    if (path.split(/[/\\]/).some((segment) => DOT_SEGMENT.test(segment))) throw new RouteNotFoundError(request.method, request.url);
    const build = await files();
    const file = build.get(path);
    if (file) return send(request, reply, file);
    if (path.startsWith(ASSETS_FOLDER)) throw new RouteNotFoundError(request.method, request.url);
    return send(request, reply, build.get(INDEX_FILE) as BuiltFile);
  });
  rejectOtherMethods(app, '/', ['GET']);
  rejectOtherMethods(app, '/*', ['GET']);
}
