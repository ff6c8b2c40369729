/**
 * The built console (`npm run build:console`, Vite) as files in memory: a few hundred kilobytes,
 * read once, so that a request never touches the file system and no path it names can leave the
 * folder (it is a key of the map, never joined to a path).
 */
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { compressedForms, type Encoding } from './content-encoding.ts';

/** One file of the build, ready to send. */
export interface BuiltFile {
  body: Buffer;
  contentType: string;
  /** The body compressed, in each encoding that makes it smaller. */
  encoded: Partial<Record<Encoding, Buffer>>;
  /** Vite's hashed assets (assets/…) never change under their name; the rest (index.html) may at each build. */
  immutable: boolean;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
};

/** Where Vite puts the hashed assets, under the build's folder. */
export const ASSETS_FOLDER = 'assets/';

/** The page every client route of the console is. */
export const INDEX_FILE = 'index.html';

/** Regular files under `dir`, recursively (symbolic links are not followed), as paths relative to it with `/`. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

/** The build in `dir` by relative path (`index.html`, `assets/app-1a2b.js`); null when it has no index.html, or not yet the assets it names (not built). */
export async function readBuiltConsole(dir: string): Promise<ReadonlyMap<string, BuiltFile> | null> {
  const paths: string[] = await filesUnder(dir).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? [] : Promise.reject(error)));
  if (!paths.includes(INDEX_FILE)) return null;
  const files = await Promise.all(
    paths.map(async (path): Promise<[string, BuiltFile]> => {
      const contentType = CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
      const body = await readFile(join(dir, path));
      return [path, { body, contentType, encoded: compressedForms(body, contentType), immutable: path.startsWith(ASSETS_FOLDER) }];
    }),
  );
  const build = new Map(files);
  // A build still being written (index.html before the assets it names) is not a build yet: the plugin would keep it.
  const named = [...(build.get(INDEX_FILE) as BuiltFile).body.toString('utf8').matchAll(/\/assets\/([^"'?#\s]+)/g)];
  return named.every(([, name]) => build.has(`${ASSETS_FOLDER}${name}`)) ? build : null;
}
