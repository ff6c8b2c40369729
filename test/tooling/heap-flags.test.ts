/**
 * The heap flags of src/heap-flags.ts: every way the project starts web and worker spells exactly
 * them (Procfile, docker-compose.yml, the Dockerfile's CMD, package.json's scripts), and the Node the
 * project runs on takes them and sizes its heap by them.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { HEAP_FLAGS } from '../../src/heap-flags.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): string => readFileSync(`${ROOT}${path}`, 'utf8');
const ENTRIES = { web: 'src/server.ts', worker: 'workers/main.ts' } as const;
const COMMAND = (entry: string): string[] => ['node', ...HEAP_FLAGS, entry];

describe('heap flags', () => {
  it('start web and worker in the Procfile and in package.json scripts', () => {
    const procfile = Object.fromEntries(
      read('Procfile')
        .trim()
        .split('\n')
        .map((line) => line.split(/:\s+/, 2) as [string, string]),
    );
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    for (const [name, entry] of Object.entries(ENTRIES)) {
      expect(procfile[name], `Procfile ${name}`).toBe(COMMAND(entry).join(' '));
      expect(scripts[name], `package.json ${name}`).toBe(COMMAND(entry).join(' '));
    }
  });

  it('start web and worker in docker-compose.yml and the image', () => {
    const services = (parse(read('docker-compose.yml')) as { services: Record<string, { command: string[] }> }).services;
    for (const [name, entry] of Object.entries(ENTRIES)) expect(services[name]?.command, `compose ${name}`).toEqual(COMMAND(entry));
    const cmd = /^CMD (.+)$/m.exec(read('Dockerfile'))?.[1];
    expect(JSON.parse(cmd ?? 'null')).toEqual(COMMAND(ENTRIES.web));
  });

  it('are taken by the project’s Node, which bounds its old generation by them', () => {
    const script = 'process.stdout.write(String(require("node:v8").getHeapStatistics().heap_size_limit))';
    const limitMb = Number(execFileSync(process.execPath, [...HEAP_FLAGS, '-e', script], { encoding: 'utf8' })) / 2 ** 20;
    const oldSpaceMb = Number(/--max-old-space-size=(\d+)/.exec(HEAP_FLAGS.join(' '))?.[1]);
    // The limit is the old generation's bound plus the young generation's: 1,536 MB and a few tens.
    expect(limitMb).toBeGreaterThanOrEqual(oldSpaceMb);
    expect(limitMb).toBeLessThan(oldSpaceMb + 100);
  });
});
