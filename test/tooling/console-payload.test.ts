/**
 * The web console's build (console/, docs/console.md): built from the current sources into a scratch folder, its
 * scripts and styles stay under 150 KB gzipped, and its index.html loads only files of its own build from the
 * same origin, with no inline script (the gateway's CSP, `default-src 'self'`, would refuse one).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VITE = join(ROOT, 'node_modules/vite/bin/vite.js');
const BUDGET_BYTES = 150 * 1024;

let out: string;

beforeAll(() => {
  // A scratch folder rather than dist/console: the check is of the sources as they are, and a gateway
  // running from dist/console is not disturbed.
  out = mkdtempSync(join(tmpdir(), 'console-build-'));
  const run = spawnSync(process.execPath, [VITE, 'build', 'console', '--outDir', out, '--emptyOutDir', '--logLevel', 'error'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`vite build failed (exit ${run.status}): ${run.stderr}${run.stdout}`);
}, 60_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Every src and href of the page, in order. */
function references(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']*)["']/gi)].map((match) => match[1] as string);
}

describe('the console build', () => {
  it('keeps its scripts and styles under 150 KB gzipped', () => {
    const assets = readdirSync(join(out, 'assets')).filter((name) => /\.(js|css)$/.test(name));
    expect(assets.some((name) => name.endsWith('.js'))).toBe(true);
    const gzipped = assets.reduce((sum, name) => sum + gzipSync(readFileSync(join(out, 'assets', name))).length, 0);
    expect(gzipped).toBeLessThan(BUDGET_BYTES);
  });

  it('loads only its own files, from the same origin, with no inline script', () => {
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    const refs = references(html);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      // The favicon is an empty data: URL (img-src allows data:), so the browser asks for no /favicon.ico.
      if (ref === 'data:,') continue;
      expect(ref, ref).toMatch(/^\/console\/assets\/[\w.-]+\.(js|css)$/);
      expect(existsSync(join(out, ref.slice('/console/'.length))), ref).toBe(true);
    }
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc=/);
      expect(body?.trim()).toBe('');
    }
    // An inline event handler is a script too.
    expect(html).not.toMatch(/\son\w+\s*=/i);
  });
});
