/**
 * Summarises a V8 .cpuprofile (from `--cpu-prof`): self time by module and the top functions, or, with
 * `--callers <name>`, the call stacks that spend self time in functions whose name contains <name>.
 *   node bench/cpu-profile-top.ts <file.cpuprofile> [topN] [--callers <name>]
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a function lives: a package, a project file, a Node internal, or a V8 pseudo-frame. */
function moduleOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith('node:')) return url;
  const project = /\/work\/[^/]+\/(.*)$/.exec(url);
  return project ? (project[1] as string) : url;
}

function table(totals: Map<string, number>, all: number, top: number): string {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, us]) => `${((100 * us) / all).toFixed(1).padStart(6)}% ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`)
    .join('\n');
}

/** Self time per module and per function, as text. */
export function summariseProfile(profile: CpuProfile, top = 25): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    if (frame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const module = moduleOf(frame.url, frame.functionName);
    byModule.set(module, (byModule.get(module) ?? 0) + us);
    const fn = `${frame.functionName || '(anonymous)'} ${module}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  return [
    `busy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms`,
    'self time by module:',
    table(byModule, total, top),
    'self time by function:',
    table(byFunction, total, top),
  ].join('\n');
}

/** Self time of the functions named like `name`, grouped by their nearest non-Node callers. */
export function callersOf(profile: CpuProfile, name: string, top = 10): string {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const stacks = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    if (!frame.functionName.includes(name)) return;
    const us = profile.timeDeltas[i] ?? 0;
    total += us;
    // Node's own stream and socket frames say nothing about who wrote: show the leaf, then application frames.
    const chain: string[] = [];
    for (let at: number | undefined = id; at !== undefined && chain.length < 5; at = parent.get(at)) {
      const f = (byId.get(at) as ProfileNode).callFrame;
      const module = moduleOf(f.url, f.functionName);
      if (chain.length > 0 && (module.startsWith('node:') || module === '(native)')) continue;
      chain.push(`${f.functionName || '(anonymous)'} ${module}:${f.lineNumber + 1}`);
    }
    const key = chain.join('\n      < ');
    stacks.set(key, (stacks.get(key) ?? 0) + us);
  });
  return `callers of *${name}*: ${(total / 1000).toFixed(0)} ms\n${table(stacks, total, top)}`;
}

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write('usage: node bench/cpu-profile-top.ts <file.cpuprofile> [topN]\n');
  process.exit(2);
}
const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
const callers = process.argv.indexOf('--callers');
const topN = Number(process.argv[3] !== undefined && !process.argv[3].startsWith('--') ? process.argv[3] : 25);
process.stdout.write(`${callers > 0 ? callersOf(profile, process.argv[callers + 1] ?? '', topN) : summariseProfile(profile, topN)}\n`);
